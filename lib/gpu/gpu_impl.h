/*
 * gpu_impl.h: the device model and sequence, shared by gpu_model.c and
 * forward_cuda.c only (CUDA builds). Shapes as in model/model.h; every pointer is
 * device memory unless it starts with h_.
 */
#ifndef TF_GPU_IMPL_H
#define TF_GPU_IMPL_H

#include "attn.cuh"
#include "gpu.h"
#include "rope.cuh"
#include "runtime.cuh"
#include "sample.cuh"

#define GPU_WINDOW 16           /* rows of a decode step or window */
#define GPU_PROMPT_SLICE 1024   /* prompt rows a pass takes */
#define GPU_HEAD_BLOCK 64       /* logits rows computed and handed over at once */

/*
 * Products that read the same input are fused: their weights are stacked
 * into one (q, k, v; in_proj_qkv, z, b, a; gate, up) so one launch reads
 * them all and writes one wider output row. When the parts differ in form
 * (a mixed-bits checkpoint) they stay separate (n parts) and each fills its
 * column slice of the same output.
 */
typedef struct {
	tf_weight w[4];
	int n;                          /* 1 when stacked */
	int64_t rows;                   /* rows of all parts: the output width */
} tf_gpu_fused;

typedef struct {
	float *in_norm, *post_norm;     /* (H) norm factors */
	tf_gpu_fused qkv;               /* full attention: q (with gate), k, v rows */
	tf_weight o_proj;
	float *q_norm, *k_norm;         /* (D) */
	tf_gpu_fused in;                /* Gated DeltaNet: in_proj_qkv, z, b, a rows */
	tf_weight out_proj;
	float *conv;                    /* (conv_dim, K) */
	float *A_log, *dt_bias;         /* (Hv) */
	float *gnorm;                   /* (Dv) */
	tf_gpu_fused gu;                /* MLP: gate rows, then up rows */
	tf_weight down;
} tf_gpu_layer;

/*
 * What the sequences of a model share, since the device runs one pass at
 * a time: the activations of a pass, the attention's split state, the
 * Gated DeltaNet's arrival counts, the logits' staging; and the rounds of
 * many sequences in one pass (round_cuda.c). A sequence owns its caches
 * and its captured steps (which point at these) and nothing larger.
 */
typedef struct gpu_round gpu_round;
typedef struct tf_gpu_exec {
	int64_t rows;                   /* rows the activations hold: a prompt slice */
	float *x;                       /* (rows, H) residual stream */
	uint16_t *x16;                  /* (2, rows, max(H, Hq*D, Hv*Dv, I)) split bf16 input of a product */
	float *proj;                    /* (rows, qkv.rows or in.rows) a mixer's fused input products */
	float *qkv;                     /* (rows, conv_dim) after the conv */
	float *o;                       /* (rows, Hv*Dv) delta-rule output */
	float *osq;                     /* (rows, Hv*Dv/32) sums of o^2 of each 32 columns */
	float *gu;                      /* (rows, 2*I) MLP gate, then up */
	float *logits;                  /* (GPU_HEAD_BLOCK, V) */
	float *h_logits;                /* (GPU_HEAD_BLOCK, V) page-locked */
	tf_attn_scratch attn;           /* decode attention split over blocks */
	unsigned *gdn_count;            /* (GPU_WINDOW, lin_k_heads) zero: tf_cuda_gdn_win's arrivals,
					   a segment's Hk of them */
	uint64_t bytes;                 /* device bytes of all of the above */
	gpu_round *round;               /* made at the first round */
} tf_gpu_exec;

typedef struct tf_gpu_model {
	tf_cuda_arena arena;            /* every weight below lives here */
	uint64_t bytes;
	tf_weight embed, head;          /* head == embed when tied */
	float *norm;                    /* (H) */
	tf_gpu_layer *layer;            /* (L) */
	tf_gpu_exec *exec;              /* made with the first sequence */
	float *rope_inv;                /* (rot/2) yarn's frequencies, in the arena; NULL for plain rope */
} tf_gpu_model;

/* the frequencies the rope kernels turn m's heads by: plain rope made in
 * the kernel as it always was, or the table uploaded with the weights */
static inline tf_rope_freq gpu_rope_freq(const tf_model *m)
{
	tf_rope_freq f = { m->c.rope_theta, m->gpu->rope_inv, m->c.rope.scale };
	return f;
}

struct tf_gpu_seq {
	const tf_model *m;
	int64_t cap;                    /* positions the KV caches hold */
	float **k, **v;                 /* per full layer: (cap, Hkv, D) */
	float **conv;                   /* per DeltaNet layer: (K-1, conv_dim) */
	float **S;                      /* per DeltaNet layer: (Hv, Dk, Dv) fp32 */

	/* a pass's inputs, read on the device so captured steps replay them */
	int32_t *ids;                   /* (rows) */
	int64_t *pos;                   /* position of the pass's first row */
	tf_draw_args *args;             /* (1 + TF_STEPS_MAX) a sampled step's uniform number
					 * and sampler, then a loop's steps' (tf_draw_next) */
	tf_loop_count *loop;            /* a loop of steps' count */
	int32_t *ring;                  /* (TF_STEPS_MAX) a loop's ids, in host memory: h_ring as
					 * the device addresses it */
	int32_t *h_ids;                 /* page-locked staging of the above */
	int64_t *h_pos;
	tf_draw_args *h_args;
	tf_loop_count *h_loop;
	int32_t *h_ring;
	float *h_logits;                /* (GPU_HEAD_BLOCK, V) */
	/* a step with a draw leaves its drawn id in ids and its position + 1
	 * in pos: while fed, ids[0] and pos hold fed_id and fed_pos on the
	 * device, so a step with those copies nothing in */
	int fed;
	int32_t fed_id;
	int64_t fed_pos;

	/* activations for up to `rows` tokens: the executor's (tf_gpu_exec) */
	int64_t rows;
	float *x;                       /* (rows, H) residual stream */
	uint16_t *x16;                  /* (2, rows, max(H, Hq*D, Hv*Dv, I)) split bf16 input of a product */
	float *proj;                    /* (rows, qkv.rows or in.rows) a mixer's fused input products */
	float *qkv;                     /* (rows, conv_dim) after the conv */
	float *o;                       /* (rows, Hv*Dv) delta-rule output */
	float *osq;                     /* (rows, Hv*Dv/32) sums of o^2 of each 32 columns */
	float *gu;                      /* (rows, 2*I) MLP gate, then up */
	float *logits;                  /* (GPU_HEAD_BLOCK, V) */
	tf_attn_scratch attn;           /* decode attention split over blocks */
	unsigned *gdn_count;            /* (lin_k_heads) zero: tf_cuda_gdn_win's arrivals */

	/* captured steps: [rows][0 no logits, 1 last row, 2 every row]; no
	 * window has 0 rows, so graph[0] holds the loops of steps that draw on
	 * the device: [0][0] top-k/top-p, [0][1] greedy, [0][2] temperature */
	tf_cuda_graph *graph[GPU_WINDOW + 1][3];

	/* a token tree's pass (tree_cuda.c), until it is committed or dropped */
	int tree_n;                     /* its nodes, 0 = none */
	int64_t tree_pos;               /* the sequence's length under it */
	int32_t tree_parent[GPU_WINDOW];
	int32_t tree_depth[GPU_WINDOW];
	int64_t *tpos;                  /* (GPU_WINDOW) each node's position */
	int64_t *h_tpos;
	float *tS;                      /* (GPU_WINDOW, Hv, Dk, Dv) the state at each depth of a branch */
	float *tconv;                   /* (GPU_WINDOW, K-1, conv_dim) likewise */
	float **tlog;                   /* per DeltaNet layer: (GPU_WINDOW, in.rows) the nodes' projections */
	uint16_t *tsplit;               /* a product input of one row, split */
	float *tsq;                     /* (Hv*Dv/32) its sums of squares */
};

int tf_gpu_reserve(tf_gpu_seq *g, int64_t need);
/* a sequence of m without caches of its own, on the executor's buffers:
 * the rounds' (round_cuda.c) */
tf_gpu_seq *gpu_seq_bare(const tf_model *m);
/* frees the rounds' part of the executor (round_cuda.c); its device bytes */
void gpu_round_free(gpu_round *r);
uint64_t gpu_round_bytes(const gpu_round *r);
/* frees what a tree pass allocated */
void gpu_tree_free(tf_gpu_seq *g);

/* the parts of a pass (forward_cuda.c), for tree_cuda.c */
int gpu_product(const tf_weight *w, const uint16_t *x, int n, float *y, int64_t ldy, int acc, int prompt);
int gpu_normed(tf_gpu_seq *g, const float *w, const tf_gpu_fused *f, int n, float *y, int prompt);
int gpu_gnorm16(const tf_weight *w, int d, int64_t cols);
int gpu_gdn_core(tf_gpu_seq *g, int i, float *mq, int n, float *S, float *cs, float *o, uint16_t *split, float *sq);
int gpu_gdn_tail(tf_gpu_seq *g, int i, int n, int win, int g16);
int gpu_mlp(tf_gpu_seq *g, int i, int n, int prompt);
int gpu_head(tf_gpu_seq *g, int64_t first, int rows, int prompt);
int gpu_stage(tf_gpu_seq *g, const int32_t *ids, int n, int64_t pos);

#endif
