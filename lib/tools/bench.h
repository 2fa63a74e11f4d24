/*
 * bench.h: what tf-bench measures. Prompt speed (ppN: N tokens in one
 * prompt pass from an empty state), decode speed (tgN: N tokens one step
 * at a time, the next id drawn on the device) and decode speed of many
 * streams in shared rounds (decode/round.h), llama-bench style, with the
 * bytes each decoded token reads and the device's measured copy bandwidth:
 * decode is memory-bound, so tok/s x bytes/token over that bandwidth is the
 * share of the roofline reached. Everything but the device's start, its
 * bandwidth and the gemv sweep runs on the CPU too, with the model left
 * there.
 */
#ifndef TF_BENCH_H
#define TF_BENCH_H

#include <stdint.h>

#include "model/model.h"

/* a model of a published geometry with synthetic weights in one form, built
 * straight on the GPU: NAME is qwen3.5-0.8b, -2b, -4b, -9b or -27b; FORM is
 * bf16, qB (MLX affine B bits, group 64) or qBgG, or sign1 (every matrix,
 * the embedding and head too, as the Bonsai 1-bit models ship) */
tf_model *tf_bench_synth(const char *name, const char *form);
/* 0 when tf_bench_synth knows name and form, else -1 with a message */
int tf_bench_synth_check(const char *name, const char *form);
void tf_bench_synth_free(tf_model *m);

/* starts the CUDA device and names it: name, multiprocessors, bytes of
 * memory; -1 with a message without a device or a CUDA build */
int tf_bench_start(char *name, size_t len, int *sms, uint64_t *mem);

/* device-to-device copy bandwidth in bytes/s, read plus written */
double tf_bench_copy_bw(void);

/* bytes of all the model's weights */
uint64_t tf_bench_weight_bytes(const tf_model *m);
/* bytes a round of one step for each of `streams` sequences at position
 * pos reads: the weights once, an embedding row, the states and the KV
 * caches of each */
uint64_t tf_bench_round_bytes(const tf_model *m, int streams, int64_t pos);

/* bytes a decode step at position pos reads: the weights (one embedding
 * row), the recurrent and conv states (read and written), the KV caches */
uint64_t tf_bench_token_bytes(const tf_model *m, int64_t pos);

typedef struct {
	double mean, sd;        /* tokens a second, over the repetitions */
	int reps;
} tf_bench_rate;

/* ppN: n tokens in one prompt pass; tgN: n decode steps after a prompt of
 * depth tokens (untimed); reps timed runs after one warm-up */
int tf_bench_pp(tf_model *m, int n, int reps, tf_bench_rate *r);
int tf_bench_tg(tf_model *m, int n, int depth, int reps, tf_bench_rate *r);
/* rowsN: passes of n rows of one sequence (tf_forward_each of n ids, the
 * last row's logits: what tf-run --window N --last runs), each after as
 * many of its own; r holds milliseconds a pass, not a rate */
int tf_bench_rows(tf_model *m, int n, int reps, tf_bench_rate *r);
/* streams sequences, each after a prompt of depth ids (untimed; 1 id for
 * 0), then n rounds of a decode step for each (tf_decoder_round): r in
 * tokens a second of all streams together */
int tf_bench_streams(tf_model *m, int streams, int n, int depth, int reps, tf_bench_rate *r);
/* the decode products of rows (1 to 16) tokens alone (tf_gpu_gemv_sweep),
 * as sweeps/s; bytes a sweep reads */
/* decoders streams decoding in rounds, then a prompt of `prompt` ids taken
 * in beside them in chunks of TF_STREAM_CHUNK paced as tf-run -P paces
 * them (decode/pace.h): their tokens a second in all before (over as many
 * rounds as the intake took) and during the intake, and the intake's ms */
typedef struct {
	double before, during, ms;
} tf_bench_intake_rate;
int tf_bench_intake(tf_model *m, int decoders, int prompt, tf_bench_intake_rate *r);
int tf_bench_gemv(tf_model *m, int rows, int reps, tf_bench_rate *r, uint64_t *bytes);

#endif
