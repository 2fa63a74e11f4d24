/* runtime.cu: device start-up, memory, copies, graphs and timers */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cublasLt.h>

#include "attn_prompt.cuh"
#include "common.cuh"
#include "gdn_chunk.cuh"
#include "gemv.cuh"
#include "runtime.cuh"

static int dev_ready;
static cudaStream_t stream;
static tf_cuda_info info;

#define GiB (1024.0 * 1024.0 * 1024.0)

int tf_cuda_fail(const char *stmt, const char *func, const char *file, int line, const char *why)
{
	return tf_err("CUDA call failed: %s (%s in %s at %s:%d)", why, stmt, func, file, line);
}

cudaStream_t tf_cuda_stream_get(void)
{
	return stream;
}

int tf_cuda_sms(void)
{
	return info.sms ? info.sms : 132;
}

int tf_cuda_count(void)
{
	int n = 0;

	if (cudaGetDeviceCount(&n) != cudaSuccess) {
		cudaGetLastError();     /* clear the sticky "no driver" status */
		return 0;
	}
	return n;
}

int tf_cuda_init(void)
{
	cudaDeviceProp p;
	const char *e = getenv("TF_CUDA_DEVICE");
	int n = tf_cuda_count(), id = e ? atoi(e) : 0;

	if (dev_ready)
		return 0;
	if (n <= 0)
		return tf_err("no CUDA device");
	if (id < 0 || id >= n)
		return tf_err("no CUDA device %d (TF_CUDA_DEVICE): %d present", id, n);
	CUDA_CHECK(cudaSetDevice(id));
	CUDA_CHECK(cudaGetDeviceProperties(&p, id));
	if (p.major < 9)
		return tf_err("CUDA device '%s' is compute capability %d.%d; the kernels are built for 9.0 (Hopper)",
			      p.name, p.major, p.minor);
	snprintf(info.name, sizeof info.name, "%s", p.name);
	info.sms = p.multiProcessorCount;
	info.cc_major = p.major;
	info.cc_minor = p.minor;
	info.mem_total = p.totalGlobalMem;
	info.l2_bytes = p.l2CacheSize;
	CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
	if (tf_cuda_gemv_setup() < 0 || tf_cuda_attn_prompt_setup() < 0 || tf_cuda_gdn_chunk_setup() < 0)
		return -1;
	dev_ready = 1;
	return 0;
}

const tf_cuda_info *tf_cuda_device(void)
{
	return dev_ready ? &info : NULL;
}

uint64_t tf_cuda_free_bytes(void)
{
	size_t fr = 0, tot = 0;

	if (cudaMemGetInfo(&fr, &tot) != cudaSuccess)
		return 0;
	return fr;
}

/* "17.2 GiB", or MiB below one GiB */
static const char *size_str(char *buf, size_t n, uint64_t bytes)
{
	if (bytes >= GiB)
		snprintf(buf, n, "%.1f GiB", bytes / GiB);
	else
		snprintf(buf, n, "%.1f MiB", bytes / (1024.0 * 1024.0));
	return buf;
}

static int no_room(const char *what, uint64_t bytes, uint64_t fr)
{
	char need[32], have[32];

	return tf_err("%s needs %s on the GPU, %s free", what ? what : "this",
		      size_str(need, sizeof need, bytes), size_str(have, sizeof have, fr));
}

void *tf_cuda_alloc(uint64_t bytes, const char *what)
{
	void *p = NULL;
	cudaError_t e;

	if (bytes == 0)
		bytes = 1;
	e = cudaMalloc(&p, bytes);
	if (e != cudaSuccess) {
		cudaGetLastError();
		if (e == cudaErrorMemoryAllocation)
			no_room(what, bytes, tf_cuda_free_bytes());
		else
			tf_cuda_fail("cudaMalloc", __func__, __FILE__, __LINE__, cudaGetErrorString(e));
		return NULL;
	}
	return p;
}

void tf_cuda_free(void *p)
{
	if (p)
		cudaFree(p);
}

int tf_cuda_regrow(void **p, uint64_t bytes, const char *what)
{
	CUDA_CHECK(cudaStreamSynchronize(stream));
	tf_cuda_free(*p);
	*p = tf_cuda_alloc(bytes, what);
	return *p ? 0 : -1;
}

void *tf_cuda_host_alloc(uint64_t bytes)
{
	void *p = NULL;

	if (cudaMallocHost(&p, bytes ? bytes : 1) != cudaSuccess) {
		cudaGetLastError();
		tf_err("cannot allocate %llu bytes of page-locked host memory", (unsigned long long)bytes);
		return NULL;
	}
	return p;
}

void *tf_cuda_host_mapped(void *p)
{
	void *d = NULL;

	if (cudaHostGetDevicePointer(&d, p, 0) != cudaSuccess) {
		cudaGetLastError();
		tf_err("page-locked host memory is not mapped into the device's addresses");
		return NULL;
	}
	return d;
}

void tf_cuda_host_free(void *p)
{
	if (p)
		cudaFreeHost(p);
}

int tf_cuda_upload(void *dst, const void *src, uint64_t bytes)
{
	CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
	CUDA_CHECK(cudaStreamSynchronize(stream));
	return 0;
}

int tf_cuda_download(void *dst, const void *src, uint64_t bytes)
{
	CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
	CUDA_CHECK(cudaStreamSynchronize(stream));
	return 0;
}

int tf_cuda_copy(void *dst, const void *src, uint64_t bytes)
{
	CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream));
	return 0;
}

int tf_cuda_zero(void *dst, uint64_t bytes)
{
	CUDA_CHECK(cudaMemsetAsync(dst, 0, bytes, stream));
	return 0;
}

int tf_cuda_upload_async(void *dst, const void *src, uint64_t bytes)
{
	CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream));
	return 0;
}

int tf_cuda_download_async(void *dst, const void *src, uint64_t bytes)
{
	CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream));
	return 0;
}

int tf_cuda_sync(void)
{
	CUDA_CHECK(cudaStreamSynchronize(stream));
	return 0;
}

int tf_cuda_idle(void)
{
	cudaError_t e = cudaStreamQuery(stream);

	if (e == cudaErrorNotReady)
		return 0;
	CUDA_CHECK(e);
	return 1;
}

/* ---- the weight arena ---- */

#define ARENA_ALIGN 256

static uint64_t align_up(uint64_t n)
{
	return (n + ARENA_ALIGN - 1) & ~(uint64_t)(ARENA_ALIGN - 1);
}

int tf_cuda_arena_open(tf_cuda_arena *a, uint64_t bytes, const char *what)
{
	/* TF_CUDA_MEM_LIMIT: the most device memory the weights may take (a GPU
	 * shared with other work); unset or 0: what the device has free */
	const char *e = getenv("TF_CUDA_MEM_LIMIT");
	uint64_t lim = e && *e ? strtoull(e, NULL, 10) : 0, fr;

	memset(a, 0, sizeof *a);
	if (lim && bytes > lim) {
		fr = tf_cuda_free_bytes();
		return no_room(what, bytes, fr < lim ? fr : lim);
	}
	a->base = (char *)tf_cuda_alloc(bytes, what);
	if (!a->base)
		return -1;
	a->size = bytes;
	return 0;
}

void *tf_cuda_arena_take(tf_cuda_arena *a, uint64_t bytes)
{
	uint64_t n = align_up(bytes);
	void *p;

	if (a->used + n > a->size) {
		tf_err("GPU weight arena overrun: %llu of %llu bytes used, %llu more wanted",
		       (unsigned long long)a->used, (unsigned long long)a->size, (unsigned long long)n);
		return NULL;
	}
	p = a->base + a->used;
	a->used += n;
	return p;
}

void tf_cuda_arena_close(tf_cuda_arena *a)
{
	tf_cuda_free(a->base);
	memset(a, 0, sizeof *a);
}

static uint64_t data_bytes(const tf_weight *w)
{
	uint64_t n = (uint64_t)w->rows * w->cols;

	switch (w->fmt) {
	case TF_F32: return 4 * n;
	case TF_BF16:
	case TF_F16: return 2 * n;
	case TF_AFFINE: return n * w->bits / 8;
	case TF_SIGN1: return n / 8;
	}
	return 0;
}

static uint64_t group_count(const tf_weight *w)
{
	if (w->fmt != TF_AFFINE && w->fmt != TF_SIGN1)
		return 0;
	return (uint64_t)w->rows * (w->cols / w->group);
}

uint64_t tf_cuda_weight_bytes(const tf_weight *w)
{
	uint64_t g = group_count(w);

	return align_up(data_bytes(w)) + align_up(2 * g) * (w->fmt == TF_AFFINE ? 2 : g ? 1 : 0);
}

/* scales or biases of any sdtype as bf16 */
static int upload_bf16(tf_cuda_arena *a, const void *src, int sdtype, uint64_t n, const void **out)
{
	uint16_t *d = (uint16_t *)tf_cuda_arena_take(a, 2 * n), *h;
	int rc;

	if (!d)
		return -1;
	*out = d;
	if (sdtype == TF_BF16)
		return tf_cuda_upload(d, src, 2 * n);
	h = (uint16_t *)tf_malloc(2 * n);
	for (uint64_t i = 0; i < n; i++)
		h[i] = tf_f32_to_bf16(tf_load_scalar(src, sdtype, i));
	rc = tf_cuda_upload(d, h, 2 * n);
	free(h);
	return rc;
}

/* the codes or values of host, as they are (the kernels read every form
 * in its own order), into room taken from a: dev gets data */
static int tf_cuda_weight_upload_data(tf_cuda_arena *a, const tf_weight *host, tf_weight *dev)
{
	uint64_t nb = data_bytes(host);
	void *d;

	*dev = *host;
	d = tf_cuda_arena_take(a, nb);
	if (!d || tf_cuda_upload(d, host->data, nb) < 0)
		return -1;
	dev->data = d;
	return 0;
}

int tf_cuda_weight_upload(tf_cuda_arena *a, const tf_weight *host, tf_weight *dev)
{
	uint64_t g = group_count(host);

	if (tf_cuda_weight_upload_data(a, host, dev) < 0)
		return -1;
	dev->scales = dev->biases = NULL;
	if (g) {
		dev->sdtype = TF_BF16;
		if (upload_bf16(a, host->scales, host->sdtype, g, &dev->scales) < 0)
			return -1;
		if (host->fmt == TF_AFFINE && upload_bf16(a, host->biases, host->sdtype, g, &dev->biases) < 0)
			return -1;
	}
	return 0;
}

/* scales or biases of several weights, each of any sdtype, as one bf16 run */
static int upload_bf16_cat(uint16_t *d, const tf_weight *const *parts, int np, int biases)
{
	for (int k = 0; k < np; k++) {
		uint64_t g = group_count(parts[k]);
		const void *src = biases ? parts[k]->biases : parts[k]->scales;
		uint16_t *h = (uint16_t *)tf_malloc(2 * g);
		int rc;
		for (uint64_t i = 0; i < g; i++)
			h[i] = tf_f32_to_bf16(tf_load_scalar(src, parts[k]->sdtype, i));
		rc = tf_cuda_upload(d, h, 2 * g);
		free(h);
		if (rc < 0)
			return -1;
		d += g;
	}
	return 0;
}

int tf_cuda_weight_upload_cat(tf_cuda_arena *a, const tf_weight *const *parts, int np, tf_weight *dev)
{
	tf_weight all = *parts[0];
	uint64_t g = 0, off = 0;

	for (int k = 1; k < np; k++)
		all.rows += parts[k]->rows;
	for (int k = 0; k < np; k++)
		g += group_count(parts[k]);
	if (tf_cuda_weight_alloc(a, &all, dev) < 0)
		return -1;
	/* the parts' codes back to back, as one weight's rows */
	for (int k = 0; k < np; k++) {
		if (tf_cuda_upload((char *)dev->data + off, parts[k]->data, data_bytes(parts[k])) < 0)
			return -1;
		off += data_bytes(parts[k]);
	}
	if (g && (upload_bf16_cat((uint16_t *)dev->scales, parts, np, 0) < 0 ||
		  (all.fmt == TF_AFFINE && upload_bf16_cat((uint16_t *)dev->biases, parts, np, 1) < 0)))
		return -1;
	return 0;
}

int tf_cuda_weight_alloc(tf_cuda_arena *a, const tf_weight *shape, tf_weight *dev)
{
	uint64_t g = group_count(shape);

	*dev = *shape;
	dev->scales = dev->biases = NULL;
	if (!(dev->data = tf_cuda_arena_take(a, data_bytes(shape))))
		return -1;
	if (g) {
		dev->sdtype = TF_BF16;
		if (!(dev->scales = tf_cuda_arena_take(a, 2 * g)))
			return -1;
		if (shape->fmt == TF_AFFINE && !(dev->biases = tf_cuda_arena_take(a, 2 * g)))
			return -1;
	}
	return 0;
}

void tf_cuda_pin(const void *p, uint64_t bytes)
{
	if (cudaHostRegister((void *)p, bytes, cudaHostRegisterReadOnly) != cudaSuccess)
		cudaGetLastError();
}

void tf_cuda_unpin(const void *p)
{
	if (cudaHostUnregister((void *)p) != cudaSuccess)
		cudaGetLastError();
}

/* ---- graphs ---- */

struct tf_cuda_graph {
	cudaGraph_t g;
	cudaGraphExec_t x;
};

int tf_cuda_capture_begin(void)
{
	CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
	return 0;
}

/* ends the stream's capture (into whole, or into a graph of its own when
 * whole is NULL) and instantiates whole: *out, or -1 with the graph gone */
static int capture_finish(cudaGraph_t whole, tf_cuda_graph **out)
{
	cudaGraph_t got = NULL;

	*out = NULL;
	if (cudaStreamEndCapture(stream, &got) != cudaSuccess || !got) {
		if (whole)
			cudaGraphDestroy(whole);
		cudaGetLastError();
		return tf_err("CUDA graph capture failed");
	}
	tf_cuda_graph *g = (tf_cuda_graph *)tf_calloc(1, sizeof *g);
	g->g = whole ? whole : got;
	if (cudaGraphInstantiate(&g->x, g->g, 0) != cudaSuccess) {
		cudaGraphDestroy(g->g);
		free(g);
		cudaGetLastError();
		return tf_err("CUDA graph instantiation failed");
	}
	*out = g;
	return 0;
}

int tf_cuda_capture_end(tf_cuda_graph **out)
{
	return capture_finish(NULL, out);
}

/* The graph being built by a loop capture: a WHILE node whose body the
 * stream's launches fill. Captures are made one at a time, on the one
 * stream, so one pending graph is enough. */
static cudaGraph_t loop_outer;

int tf_cuda_loop_begin(uint64_t *cond)
{
	cudaGraphConditionalHandle h;
	cudaGraphNodeParams p = {};
	cudaGraphNode_t node;

	CUDA_CHECK(cudaGraphCreate(&loop_outer, 0));
	/* the condition is 1 as each launch starts: the body runs at least once */
	if (cudaGraphConditionalHandleCreate(&h, loop_outer, 1, cudaGraphCondAssignDefault) != cudaSuccess)
		goto fail;
	p.type = cudaGraphNodeTypeConditional;
	p.conditional.handle = h;
	p.conditional.type = cudaGraphCondTypeWhile;
	p.conditional.size = 1;
	if (cudaGraphAddNode(&node, loop_outer, NULL, NULL, 0, &p) != cudaSuccess ||
	    cudaStreamBeginCaptureToGraph(stream, p.conditional.phGraph_out[0], NULL, NULL, 0,
					  cudaStreamCaptureModeThreadLocal) != cudaSuccess)
		goto fail;
	*cond = h;
	return 0;
fail:
	cudaGraphDestroy(loop_outer);
	loop_outer = NULL;
	cudaGetLastError();
	return tf_err("this CUDA driver cannot run a loop of steps in a graph (conditional nodes)");
}

int tf_cuda_loop_end(tf_cuda_graph **out)
{
	cudaGraph_t whole = loop_outer;

	loop_outer = NULL;
	return capture_finish(whole, out);
}

int tf_cuda_graph_run(tf_cuda_graph *g)
{
	CUDA_CHECK(cudaGraphLaunch(g->x, stream));
	return 0;
}

void tf_cuda_graph_free(tf_cuda_graph *g)
{
	if (!g)
		return;
	cudaGraphExecDestroy(g->x);
	cudaGraphDestroy(g->g);
	free(g);
}

/* ---- timers ---- */

struct tf_cuda_timer {
	cudaEvent_t a, b;
};

tf_cuda_timer *tf_cuda_timer_new(void)
{
	tf_cuda_timer *t = (tf_cuda_timer *)tf_calloc(1, sizeof *t);

	if (cudaEventCreate(&t->a) != cudaSuccess || cudaEventCreate(&t->b) != cudaSuccess) {
		free(t);
		tf_err("cannot create CUDA events");
		return NULL;
	}
	return t;
}

int tf_cuda_timer_start(tf_cuda_timer *t)
{
	CUDA_CHECK(cudaEventRecord(t->a, stream));
	return 0;
}

double tf_cuda_timer_stop(tf_cuda_timer *t)
{
	float ms = 0;

	CUDA_CHECK(cudaEventRecord(t->b, stream));
	CUDA_CHECK(cudaEventSynchronize(t->b));
	CUDA_CHECK(cudaEventElapsedTime(&ms, t->a, t->b));
	return ms;
}

void tf_cuda_timer_free(tf_cuda_timer *t)
{
	if (!t)
		return;
	cudaEventDestroy(t->a);
	cudaEventDestroy(t->b);
	free(t);
}
