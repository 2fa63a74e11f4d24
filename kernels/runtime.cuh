/*
 * runtime.cuh: the CUDA device as libtf sees it (C interface): start-up,
 * device memory and the weight arena, copies, graphs of launches, timers.
 *
 * One device and one stream per process: every kernel entry launches on
 * that stream, so a decode step can be captured once into a graph and
 * replayed. Every function returns 0 (or a pointer) on success and -1 (or
 * NULL) with a message from tf_errmsg() on failure.
 */
#ifndef TF_RUNTIME_CUH
#define TF_RUNTIME_CUH

#include <stdint.h>

#include "model/weight.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
	char name[256];
	int sms;                /* multiprocessors */
	int cc_major, cc_minor;
	uint64_t mem_total;     /* bytes of device memory */
	uint64_t l2_bytes;
} tf_cuda_info;

/* usable devices: 0 where there is no driver or no GPU (no message) */
int tf_cuda_count(void);
/* selects device 0 (or $TF_CUDA_DEVICE), creates the stream; -1 "no CUDA device" */
int tf_cuda_init(void);
const tf_cuda_info *tf_cuda_device(void);
/* bytes of device memory free now */
uint64_t tf_cuda_free_bytes(void);

/* plain device allocations; `what` names the need in the out-of-memory
 * message: "WHAT needs 17.2 GiB on the GPU, 12.1 GiB free" */
void *tf_cuda_alloc(uint64_t bytes, const char *what);
void tf_cuda_free(void *p);
/* scratch that grows: *p freed once the stream's work is done (a captured
 * step may point at it) and replaced by bytes of device memory; -1 and *p
 * NULL where there is no room */
int tf_cuda_regrow(void **p, uint64_t bytes, const char *what);

/* page-locked host memory, for copies that overlap and can be captured */
void *tf_cuda_host_alloc(uint64_t bytes);
void tf_cuda_host_free(void *p);
/* the device's address of page-locked host memory from tf_cuda_host_alloc,
 * which kernels may write (the host reads it after a sync); NULL with an
 * error where the device cannot */
void *tf_cuda_host_mapped(void *p);

/* host <-> device copies (synchronous), device copies and fills (on the stream) */
int tf_cuda_upload(void *dst, const void *src, uint64_t bytes);
int tf_cuda_download(void *dst, const void *src, uint64_t bytes);
int tf_cuda_copy(void *dst, const void *src, uint64_t bytes);
int tf_cuda_zero(void *dst, uint64_t bytes);
/* stream-ordered copies of page-locked host buffers (a step's ids and
 * positions in, its logits out); they may be captured into a graph */
int tf_cuda_upload_async(void *dst, const void *src, uint64_t bytes);
int tf_cuda_download_async(void *dst, const void *src, uint64_t bytes);
int tf_cuda_sync(void);
/* 1 when the stream has done all its work, 0 while it works, -1 on error */
int tf_cuda_idle(void);

/* The arena: one allocation for every weight, carved at 256-byte offsets so
 * each tensor starts aligned for 16-byte vector loads. */
typedef struct {
	char *base;
	uint64_t size, used;
} tf_cuda_arena;

int tf_cuda_arena_open(tf_cuda_arena *a, uint64_t bytes, const char *what);
void *tf_cuda_arena_take(tf_cuda_arena *a, uint64_t bytes);
void tf_cuda_arena_close(tf_cuda_arena *a);

/* takes device room for a weight of w's form and shape from the arena,
 * laid out as tf_cuda_weight_upload lays it out, without filling it */
int tf_cuda_weight_alloc(tf_cuda_arena *a, const tf_weight *shape, tf_weight *dev);
/* device bytes tf_cuda_weight_upload takes from an arena for w */
uint64_t tf_cuda_weight_bytes(const tf_weight *w);
/* copies a host weight into the arena: dev gets the same form with device
 * pointers; scales and biases are stored as bf16 (the kernels' one scale
 * type), codes and float data unchanged */
int tf_cuda_weight_upload(tf_cuda_arena *a, const tf_weight *host, tf_weight *dev);

/* copies weights of one form and width (parts[0..np), same fmt, cols, bits,
 * group) into the arena as one weight of their rows stacked in order: a
 * fused product reads them in one launch */
int tf_cuda_weight_upload_cat(tf_cuda_arena *a, const tf_weight *const *parts, int np, tf_weight *dev);

/* pins a host range for faster uploads (a mapped bundle); failure is harmless */
void tf_cuda_pin(const void *p, uint64_t bytes);
void tf_cuda_unpin(const void *p);

/* graphs: launches between begin and end are recorded, not run */
typedef struct tf_cuda_graph tf_cuda_graph;
int tf_cuda_capture_begin(void);
int tf_cuda_capture_end(tf_cuda_graph **g);
int tf_cuda_graph_run(tf_cuda_graph *g);
/* a loop: launches between loop_begin and loop_end are the body of a graph
 * that runs them again and again, as long as a kernel of theirs leaves the
 * condition cond non-zero (cudaGraphSetConditional), with no trip through
 * the host between turns; each run of the graph starts with it set */
int tf_cuda_loop_begin(uint64_t *cond);
int tf_cuda_loop_end(tf_cuda_graph **g);
void tf_cuda_graph_free(tf_cuda_graph *g);

/* device time between two marks on the stream, in milliseconds */
typedef struct tf_cuda_timer tf_cuda_timer;
tf_cuda_timer *tf_cuda_timer_new(void);
int tf_cuda_timer_start(tf_cuda_timer *t);
/* waits for the stream; -1 on failure */
double tf_cuda_timer_stop(tf_cuda_timer *t);
void tf_cuda_timer_free(tf_cuda_timer *t);

#ifdef __cplusplus
}
#endif

#endif
