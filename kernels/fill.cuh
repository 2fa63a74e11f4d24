/*
 * fill.cuh: deterministic random device data, for synthetic weights in
 * benchmarks and for tests that need more data than is worth uploading.
 */
#ifndef TF_FILL_CUH
#define TF_FILL_CUH

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* bytes of random bits (codes, sign bits) from seed */
int tf_cuda_fill_bits(void *p, uint64_t bytes, uint64_t seed);
/* n bf16 values, uniform in [-scale, scale), from seed */
int tf_cuda_fill_bf16(uint16_t *p, uint64_t n, float scale, uint64_t seed);

/* n floats, all v */
int tf_cuda_fill_f32(float *p, uint64_t n, float v);

#ifdef __cplusplus
}
#endif

#endif
