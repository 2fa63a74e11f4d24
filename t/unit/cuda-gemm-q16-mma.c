/* cuda-gemm-q16-mma: the int16-input products of passes of 2 to 16 rows
 * on the tensor cores: every form and group, odd shapes (rows not a
 * multiple of a tile, the fewest columns a form takes), every input kind
 * and epilogue, passes of 2, 3, 5, 8, 13 and 16 rows: each row's outputs
 * bit for bit those of the row alone (the one-row kernels), and the split
 * inputs' outputs the CPU's int16-input sum */
#include "cudatest.h"

#ifndef TF_CUDA
int main(void)
{
	skip_all("built without CUDA");
}
#else
#include "gemm_q16_mma.cuh"
#include "gemv_q16.cuh"

#define NX 16
#define EPS 1e-6f
#define HD 32                   /* heads of the gated norms */
#define SWI16 (TF_Q16_SWIGLU + 1)

struct form {
	int fmt, bits, group;
};

/* one weight and its inputs on the host and the device */
struct ctx {
	tf_weight w, dw;
	int64_t rows, cols;
	float *x, *dx, *dnw, *dgw, *dz, *dsq, *y0, *dy;
	uint16_t *h, *hu, *hw, *ds, *dso, *ho;
};

static const char *kind_name[] = { "split", "norm", "gated norm", "rows", "split normed by heads" };
static const char *epi_name[] = { "stored", "added", "SwiGLU", "SwiGLU to int16" };

static int64_t out_of(const struct ctx *c, int epi)
{
	return epi >= TF_Q16_SWIGLU ? c->rows / 2 : c->rows;
}

/* bytes of one row's results */
static int64_t row_bytes(const struct ctx *c, int epi)
{
	const int64_t out = out_of(c, epi);

	return epi == SWI16 ? 2 * out + 8 * (out / 32) : 4 * out;
}

/* the product of input rows i .. i + m - 1 in one call, their results at
 * res + i * row_bytes (SwiGLU to int16: codes, scales, sums a row) */
static void product(struct ctx *c, int kind, int epi, int i, int m, uint8_t *res)
{
	const int64_t cols = c->cols, out = out_of(c, epi), rb = row_bytes(c, epi);
	tf_q16_in in = { .kind = kind, .x = c->dx + i * cols, .ldx = cols, .eps = EPS };

	if (kind == TF_Q16_SPLIT || kind == TF_Q16_HSPLIT) {
		sub_split(kind == TF_Q16_SPLIT ? c->h : c->hu, NX, cols, i, m, c->hw);
		DIE_IF(tf_cuda_upload(c->ds, c->hw, split_bytes(m * cols)));
		in.split = c->ds;
		in.sq = kind == TF_Q16_HSPLIT ? c->dsq + i * cols / 32 : NULL;
		in.d = HD;
	} else if (kind == TF_Q16_NORM) {
		in.w = c->dnw;
	} else if (kind == TF_Q16_GNORM) {
		in.w = c->dgw;
		in.z = c->dz + i * cols;
		in.ldz = cols;
		in.d = HD;
	}
	if (epi == SWI16) {
		DIE_IF(tf_cuda_gemv_q16_swiglu16(&c->dw, &in, m, c->dso));
		dev_get(c->ho, c->dso, split_bytes(m * out));
		for (int k = 0; k < m; k++) {
			uint8_t *r = res + (i + k) * rb;
			memcpy(r, split_q16(c->ho, m * out) + k * out, 2 * out);
			memcpy(r + 2 * out, split_scales(c->ho, m * out) + k * out / 32, 4 * out / 32);
			memcpy(r + 2 * out + 4 * out / 32, split_sums(c->ho, m * out) + k * out / 32, 4 * out / 32);
		}
		return;
	}
	DIE_IF(tf_cuda_upload(c->dy, c->y0 + i * out, 4 * m * out));
	DIE_IF(tf_cuda_gemv_q16(&c->dw, &in, m, c->dy, out, epi));
	dev_get(res + i * rb, c->dy, 4 * m * out);
}

static void run(const struct form *f, int64_t rows, int64_t cols)
{
	static const int ns[] = { 2, 3, 5, 8, 13, 16 };
	struct ctx c = { .rows = rows, .cols = cols };
	const int64_t nb = NX * cols / 32;
	float *xf = malloc(4 * NX * cols), *nw = malloc(4 * cols), *gw = malloc(4 * HD), *z = malloc(4 * NX * cols);
	float *u = malloc(4 * NX * cols), *sq = malloc(4 * nb), *want = malloc(4 * NX * rows);
	uint8_t *one = malloc(4 * NX * rows), *got = malloc(4 * NX * rows);
	char what[200];
	tf_cuda_arena a;

	c.w = make_weight(f->fmt, rows, cols, f->bits, f->group);
	c.x = malloc(4 * NX * cols);
	c.y0 = malloc(4 * NX * rows);
	c.h = malloc(split_bytes(NX * cols));
	c.hu = calloc(1, split_bytes(NX * cols));
	c.hw = malloc(split_bytes(NX * cols));
	c.ho = malloc(split_bytes(NX * rows));
	fill_split(c.h, xf, NX * cols, 1.0f);
	fill_f32(c.x, NX * cols, 3.0f);
	fill_f32(nw, cols, 1.0f);
	fill_f32(gw, HD, 1.0f);
	fill_f32(z, NX * cols, 2.0f);
	fill_f32(c.y0, NX * rows, 1.0f);
	/* a split input normed by heads: x w silu(z) and the sums of x^2 */
	for (int64_t i = 0; i < NX * cols; i++)
		u[i] = c.x[i] * gw[i % HD] * z[i] / (1.0f + expf(-z[i]));
	fill_split(c.hu, xf, NX * cols, 1.0f);
	for (int64_t b = 0; b < nb; b++) {
		int16_t *q = split_q16(c.hu, NX * cols) + 32 * b;
		double s = 0, ss = 0;
		q16_block(u + 32 * b, q, split_scales(c.hu, NX * cols) + b);
		for (int k = 0; k < 32; k++) {
			s += u[32 * b + k];
			ss += (double)c.x[32 * b + k] * c.x[32 * b + k];
		}
		split_sums(c.hu, NX * cols)[b] = (float)s;
		sq[b] = (float)ss;
	}
	DIE_IF(tf_cuda_arena_open(&a, tf_cuda_weight_bytes(&c.w), "test weight"));
	DIE_IF(tf_cuda_weight_upload(&a, &c.w, &c.dw));
	c.dx = dev_copy(c.x, 4 * NX * cols);
	c.dnw = dev_copy(nw, 4 * cols);
	c.dgw = dev_copy(gw, 4 * HD);
	c.dz = dev_copy(z, 4 * NX * cols);
	c.dsq = dev_copy(sq, 4 * nb);
	c.dy = tf_cuda_alloc(4 * NX * rows, "test output");
	c.ds = tf_cuda_alloc(split_bytes(NX * cols), "test input");
	c.dso = tf_cuda_alloc(split_bytes(NX * rows), "test output");

	snprintf(what, sizeof what, "%s%d g%d %lld x %lld", tf_fmt_name(f->fmt), f->bits, f->group, (long long)rows,
		 (long long)cols);
	ok(tf_cuda_gemv_q16_mma_takes(&c.dw, TF_Q16_STORE, 0), "%s: passes of several rows take the tensor cores", what);

	/* split inputs, 16 rows: the CPU's int16-input sum */
	q16_reference(&c.w, split_q16(c.h, NX * cols), split_scales(c.h, NX * cols), split_sums(c.h, NX * cols), NX,
		      want);
	product(&c, TF_Q16_SPLIT, TF_Q16_STORE, 0, NX, got);
	ok(close_enough(what, (float *)got, want, NX * rows, rows, 1e-11, 1e30), "%s: 16 rows equal the int16-input sum",
	   what);

	for (int kind = TF_Q16_SPLIT; kind <= TF_Q16_HSPLIT; kind++)
		for (int epi = TF_Q16_STORE; epi <= SWI16; epi++) {
			char w2[260];
			if (epi >= TF_Q16_SWIGLU && rows % 2)
				continue;
			if (epi == SWI16 && !tf_cuda_gemv_q16_swiglu16_takes(&c.dw))
				continue;
			snprintf(w2, sizeof w2, "%s, %s input, %s", what, kind_name[kind], epi_name[epi]);
			const int64_t rb = row_bytes(&c, epi);
			for (int i = 0; i < NX; i++)
				product(&c, kind, epi, i, 1, one);
			int same = 1;
			for (unsigned k = 0; k < sizeof ns / sizeof *ns; k++) {
				memset(got, 0xa5, NX * rb);
				product(&c, kind, epi, 0, ns[k], got);
				for (int i = 0; i < ns[k]; i++)
					if (memcmp(got + i * rb, one + i * rb, rb)) {
						diag("%s: pass of %d rows, row %d differs from the row alone", w2, ns[k], i);
						same = 0;
						break;
					}
			}
			ok(same, "%s: passes of 2, 3, 5, 8, 13, 16 rows give each row's bits alone", w2);
		}

	tf_cuda_free(c.dx); tf_cuda_free(c.dnw); tf_cuda_free(c.dgw); tf_cuda_free(c.dz); tf_cuda_free(c.dsq);
	tf_cuda_free(c.dy); tf_cuda_free(c.ds); tf_cuda_free(c.dso);
	tf_cuda_arena_close(&a);
	free_weight(&c.w);
	free(c.x); free(c.y0); free(c.h); free(c.hu); free(c.hw); free(c.ho);
	free(xf); free(nw); free(gw); free(z); free(u); free(sq); free(want); free(one); free(got);
}

int main(void)
{
	static const struct form forms[] = {
		{ TF_SIGN1, 1, 128 },
		{ TF_AFFINE, 2, 32 }, { TF_AFFINE, 2, 64 }, { TF_AFFINE, 2, 128 },
		{ TF_AFFINE, 3, 32 }, { TF_AFFINE, 3, 64 }, { TF_AFFINE, 3, 128 },
		{ TF_AFFINE, 4, 32 }, { TF_AFFINE, 4, 64 }, { TF_AFFINE, 4, 128 },
		{ TF_AFFINE, 5, 32 }, { TF_AFFINE, 5, 64 }, { TF_AFFINE, 5, 128 },
		{ TF_AFFINE, 6, 32 }, { TF_AFFINE, 6, 64 }, { TF_AFFINE, 6, 128 },
		{ TF_AFFINE, 8, 32 }, { TF_AFFINE, 8, 64 }, { TF_AFFINE, 8, 128 },
	};

	/* every pass of 2 rows or more on the tensor cores, not only those
	 * where they are faster */
	setenv("TF_Q16_MMA", "1", 1);
	cuda_or_skip();
	for (unsigned i = 0; i < sizeof forms / sizeof *forms; i++) {
		const struct form *f = &forms[i];
		/* the fewest columns (one group; the 2-bit form of 64-column
		 * chunks at 64), 70 rows (a tile and part of one, 35 SwiGLU
		 * pairs); 192 rows over 1152 columns (SwiGLU outputs in 32-column
		 * blocks), 1120 for 2 bits in 32-column groups (not whole
		 * 64-column chunks) */
		run(f, 70, f->group);
		run(f, 192, f->bits == 2 && f->group == 32 ? 1120 : 1152);
	}
	/* the 9B's shape of 4-bit and sign1 rows: many tiles a block */
	run(&forms[8], 4160, 4096);
	run(&forms[0], 4160, 4096);
	return done();
}
#endif
