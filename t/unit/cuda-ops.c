/* cuda-ops: every GPU kernel besides the decode product against the CPU
 * code or a float64 reference, on odd shapes; rows computed alone and in
 * windows bit-identical where the kernel promises it */
#include "cpu/matmul.h"
#include "cpu/ops.h"
#include "cudatest.h"
#include "decode/sample.h"
#include "gdnref.h"

#ifndef TF_CUDA
int main(void)
{
	skip_all("built without CUDA");
}
#else
#include "act.cuh"
#include "attn.cuh"
#include "attn_prompt.cuh"
#include "conv.cuh"
#include "embed.cuh"
#include "gdn.cuh"
#include "gdn_chunk.cuh"
#include "gdn_in.cuh"
#include "gdn_win.cuh"
#include "gemm.cuh"
#include "norm.cuh"
#include "rope.cuh"
#include "sample.cuh"

static float *dev_f32(const float *h, int64_t n) { return dev_copy(h, 4 * n); }
static float *dev_zero(int64_t n) { float *d = tf_cuda_alloc(split_bytes(n), "test"); DIE_IF(tf_cuda_zero(d, 4 * n)); return d; }
static float *fresh(int64_t n, float scale) { float *p = malloc(4 * n); fill_f32(p, n, scale); return p; }

static void test_rmsnorm(void)
{
	static const int shapes[][2] = { { 1, 64 }, { 3, 256 }, { 118, 4097 }, { 2, 5120 } };
	for (unsigned s = 0; s < 4; s++) {
		int n = shapes[s][0], d = shapes[s][1];
		float *x = fresh((int64_t)n * d, 3), *w = fresh(d, 1), *want = malloc(4 * n * d), *got = malloc(4 * n * d);
		uint16_t *g16 = malloc(split_bytes((int64_t)n * d));
		float *dx = dev_f32(x, (int64_t)n * d), *dw = dev_f32(w, d), *dy = dev_zero((int64_t)n * d);
		uint16_t *d16 = tf_cuda_alloc(split_bytes((int64_t)n * d), "test");
		char what[64];

		snprintf(what, sizeof what, "rmsnorm %d x %d", n, d);
		tf_rmsnorm(want, x, w, n, d, 1e-6f);
		dev_poison(dy, 4 * n * d);
		DIE_IF(tf_cuda_rmsnorm(dx, dw, n, d, 1e-6f, dy, d16));
		dev_get(got, dy, 4 * n * d);
		ok(close_enough(what, got, want, (int64_t)n * d, d, 1e-12, 1e-4), "%s f32 matches tf_rmsnorm", what);
		dev_get(g16, d16, split_bytes((int64_t)n * d));
		join_split(g16, (int64_t)n * d, got);
		ok(close_enough(what, got, want, (int64_t)n * d, d, 1e-9, 1e30), "%s split bf16 output carries the f32 one", what);
		if (d % 32 == 0) {
			/* the 32-column sums of hi + lo after the planes */
			const float *sums = (const float *)(g16 + 2 * (int64_t)n * d);
			float *ws = malloc(4 * n * d / 32);
			for (int64_t k = 0; k < (int64_t)n * d / 32; k++) {
				double a = 0;
				for (int j = 0; j < 32; j++)
					a += got[32 * k + j];
				ws[k] = (float)a;
			}
			ok(close_enough(what, sums, ws, (int64_t)n * d / 32, d / 32, 1e-12, 1e30),
			   "%s: the 32-column sums follow the planes", what);
			free(ws);
		}
		/* row alone vs in the batch */
		if (n > 1) {
			DIE_IF(tf_cuda_rmsnorm(dx + d, dw, 1, d, 1e-6f, dy, NULL));
			float *one = malloc(4 * d);
			dev_get(one, dy, 4 * d);
			DIE_IF(tf_cuda_rmsnorm(dx, dw, n, d, 1e-6f, dy, NULL));
			dev_get(got, dy, 4 * n * d);
			ok(same_bits(what, one, got + d, d), "%s: a row alone equals it in the batch", what);
			free(one);
		}
		free(x); free(w); free(want); free(got); free(g16);
		tf_cuda_free(dx); tf_cuda_free(dw); tf_cuda_free(dy); tf_cuda_free(d16);
	}
}

static void test_gated_norm(void)
{
	/* z inside a wider row, as the fused input product leaves it */
	int n = 3, heads = 48, d = 128, rows = n * heads;
	int64_t ldz = (int64_t)heads * d + 96;
	float *o = fresh(rows * d, 2), *z = fresh(n * ldz, 2), *w = fresh(d, 1), *want = malloc(4 * rows * d);
	float *got = malloc(4 * rows * d);
	uint16_t *g16 = malloc(4 * rows * d), *d16 = tf_cuda_alloc(split_bytes(rows * d), "test");
	float *dO = dev_f32(o, rows * d), *dz = dev_f32(z, n * ldz), *dw = dev_f32(w, d);

	tf_rmsnorm(want, o, w, rows, d, 1e-6f);
	for (int r = 0; r < rows; r++)
		for (int j = 0; j < d; j++)
			want[r * d + j] *= tf_silu(z[r / heads * ldz + r % heads * d + j]);
	DIE_IF(tf_cuda_gated_norm(dO, dz, ldz, dw, n, heads, d, 1e-6f, d16));
	dev_get(g16, d16, 4 * rows * d);
	join_split(g16, rows * d, got);
	ok(close_enough("gated norm 144 x 128", got, want, rows * d, d, 1e-9, 1e30), "gated norm matches the CPU");
	free(o); free(z); free(w); free(want); free(got); free(g16);
	tf_cuda_free(d16); tf_cuda_free(dO); tf_cuda_free(dz); tf_cuda_free(dw);
}

/* the device's frequencies for table t: plain rope by theta alone (the
 * kernel's own expression), a scaled one by t's table uploaded; *dinv the
 * upload to free, or NULL */
static tf_rope_freq dev_freq(const tf_rope_table *t, float **dinv)
{
	*dinv = t->type == TF_ROPE_DEFAULT ? NULL : dev_f32(t->inv, t->rot / 2);
	return (tf_rope_freq){ t->theta, *dinv, t->scale };
}

/* q norm and rotary at positions up to 200000 against tf_rmsnorm and
 * tf_rope with the same table: plain rope at theta 1e7, or yarn */
static void test_rope(const tf_rope_table *t, const char *name)
{
	static const int64_t poss[] = { 0, 1000, 200000 };
	int n = 3, H = 5, D = 256, rot = t->rot;
	int64_t ts = 2LL * H * D, hs = 2 * D, N = n * ts;      /* the q_proj layout: q then gate per head */
	float *dinv;
	tf_rope_freq fr = dev_freq(t, &dinv);
	for (int p = 0; p < 3; p++) {
		float *x = fresh(N, 2), *w = fresh(D, 1), *want = malloc(4 * N), *got = malloc(4 * N);
		float *dx = dev_f32(x, N), *dw = dev_f32(w, D);
		int64_t *dp = dev_copy(&poss[p], 8);
		char what[96];

		memcpy(want, x, 4 * N);
		for (int t0 = 0; t0 < n; t0++)
			for (int h = 0; h < H; h++) {
				float *v = want + t0 * ts + h * hs;
				tf_rmsnorm(v, v, w, 1, D, 1e-6f);
				tf_rope(v, t, poss[p] + t0);
			}
		DIE_IF(tf_cuda_qk_norm_rope(dx, n, H, D, ts, hs, dw, 1e-6f, rot, fr, dp));
		dev_get(got, dx, 4 * N);
		snprintf(what, sizeof what, "q norm + %s rotary at %lld", name, (long long)poss[p]);
		ok(close_enough(what, got, want, N, D, 1e-10, 1e-3), "%s matches tf_rmsnorm + tf_rope (gates untouched)", what);
		free(x); free(w); free(want); free(got);
		tf_cuda_free(dx); tf_cuda_free(dw); tf_cuda_free(dp);
	}
	tf_cuda_free(dinv);
}

static void test_rope_refused(void)
{
	tf_rope_freq fr = { 1e7f, NULL, 1.0f };

	/* a lane holds 16 entries of a head: a wider one is refused, as is
	 * rotary past the head */
	ok(tf_cuda_qk_norm_rope(NULL, 1, 1, 1024, 1024, 1024, NULL, 1e-6f, 64, fr, NULL) < 0 &&
	   strstr(tf_errmsg(), "1024-dim head"), "a head of 1024 is refused: %s", tf_errmsg());
	ok(tf_cuda_attn_prep(NULL, 1, 2, 1, 64, 256, NULL, NULL, 1e-6f, 128, fr, NULL, NULL, NULL) < 0 &&
	   strstr(tf_errmsg(), "rotary of 128 dims"), "rotary past the head is refused: %s", tf_errmsg());
}

/* double reference of gated causal attention for rows at pos0 .. pos0+n-1 */
static void attn_ref(const float *qg, const float *kc, const float *vc, int64_t pos0, int n, int Hq, int Hkv, int D,
		     float *out)
{
	for (int t = 0; t < n; t++)
		for (int h = 0; h < Hq; h++) {
			const float *q = qg + ((int64_t)t * Hq + h) * 2 * D, *gate = q + D;
			int64_t len = pos0 + t + 1;
			double *p = malloc(sizeof *p * len), mx = -1e300, sum = 0;
			for (int64_t s = 0; s < len; s++) {
				double dot = 0;
				for (int d = 0; d < D; d++)
					dot += (double)q[d] * kc[(s * Hkv + h / (Hq / Hkv)) * D + d];
				p[s] = dot / sqrt((double)D);
				if (p[s] > mx)
					mx = p[s];
			}
			for (int64_t s = 0; s < len; s++)
				sum += p[s] = exp(p[s] - mx);
			for (int d = 0; d < D; d++) {
				double a = 0;
				for (int64_t s = 0; s < len; s++)
					a += p[s] / sum * vc[(s * Hkv + h / (Hq / Hkv)) * D + d];
				out[((int64_t)t * Hq + h) * D + d] = (float)(a / (1 + exp(-(double)gate[d])));
			}
			free(p);
		}
}

static void test_attention(void)
{
	/* contexts of one chunk of cache rows and of many (kernels/attn.cu splits
	 * those over blocks): 255 + 1 rows is the last that one block takes */
	static const int cfg[][4] = { /* pos0, n, Hq/Hkv, D */ { 0, 1, 2, 64 }, { 5, 3, 4, 256 }, { 1000, 16, 6, 256 },
				      { 4096, 2, 2, 128 }, { 255, 3, 1, 64 }, { 7, 3, 2, 512 } };
	for (unsigned c = 0; c < sizeof cfg / sizeof *cfg; c++) {
		int64_t pos0 = cfg[c][0];
		int n = cfg[c][1], Hkv = 2, Hq = Hkv * cfg[c][2], D = cfg[c][3];
		int64_t cap = pos0 + n, kv = cap * Hkv * D, qn = (int64_t)n * Hq * 2 * D, on = (int64_t)n * Hq * D;
		float *qg = fresh(qn, 1), *kc = fresh(kv, 1), *vc = fresh(kv, 1), *want = malloc(4 * on), *got = malloc(4 * on);
		uint16_t *g16 = malloc(4 * on), *one16 = malloc(4 * on), *d16 = tf_cuda_alloc(split_bytes(on), "test");
		uint16_t *d1 = tf_cuda_alloc(split_bytes(Hq * D), "test");
		float *dq = dev_f32(qg, qn), *dk = dev_f32(kc, kv), *dv = dev_f32(vc, kv);
		int64_t *dp = dev_copy(&pos0, 8);
		tf_attn_scratch sc;
		char what[80];

		snprintf(what, sizeof what, "attention pos %lld, %d rows, %d/%d heads, D %d", (long long)pos0, n, Hq, Hkv, D);
		attn_ref(qg, kc, vc, pos0, n, Hq, Hkv, D, want);
		DIE_IF(tf_cuda_attn_scratch_init(&sc, Hq, D));
		DIE_IF(tf_cuda_attention(dq, 2LL * Hq * D, dk, dv, dp, n, Hq, Hkv, D, d16, &sc));
		dev_get(g16, d16, 4 * on);
		join_split(g16, on, got);
		ok(close_enough(what, got, want, on, D, 1e-9, 1e30), "%s matches a float64 reference", what);
		/* each row alone, at its own position */
		for (int t = 0; t < n; t++) {
			int64_t p = pos0 + t, hd = (int64_t)Hq * D;
			DIE_IF(tf_cuda_upload(dp, &p, 8));
			DIE_IF(tf_cuda_attention(dq + t * 2 * hd, 2 * hd, dk, dv, dp, 1, Hq, Hkv, D, d1, &sc));
			dev_get(one16 + t * hd, d1, 2 * hd);
			dev_get(one16 + on + t * hd, d1 + hd, 2 * hd);
		}
		ok(!memcmp(one16, g16, 4 * on), "%s: rows alone equal the window", what);
		free(qg); free(kc); free(vc); free(want); free(got); free(g16); free(one16);
		tf_cuda_free(d16); tf_cuda_free(d1); tf_cuda_free(dq); tf_cuda_free(dk); tf_cuda_free(dv); tf_cuda_free(dp);
		tf_cuda_attn_scratch_free(&sc);
	}
	/* appending to the cache at a device-side position */
	{
		int n = 3, row = 2 * 64;
		int64_t pos = 7, cap = 16;
		float *k = fresh(n * row, 1), *v = fresh(n * row, 1), *kc = malloc(4 * cap * row), *vc = malloc(4 * cap * row);
		float *dk = dev_f32(k, n * row), *dv = dev_f32(v, n * row), *dkc = dev_zero(cap * row), *dvc = dev_zero(cap * row);
		int64_t *dp = dev_copy(&pos, 8);
		DIE_IF(tf_cuda_kv_append(dk, dv, row, n, row, dp, dkc, dvc));
		dev_get(kc, dkc, 4 * cap * row);
		dev_get(vc, dvc, 4 * cap * row);
		ok(!memcmp(kc + pos * row, k, 4 * n * row) && !memcmp(vc + pos * row, v, 4 * n * row) && kc[pos * row - 1] == 0 &&
		   kc[(pos + n) * row] == 0, "kv append writes rows pos .. pos+n-1 and nothing else");
		free(k); free(v); free(kc); free(vc);
		tf_cuda_free(dk); tf_cuda_free(dv); tf_cuda_free(dkc); tf_cuda_free(dvc); tf_cuda_free(dp);
	}
}

/* the parts of on split values past the planes follow the planes (xf, their
 * hi + lo): each 32-column sum within 1e-6 of the sum of magnitudes, and the
 * int16 form within a code and 1e-4 of a scale (put_split makes it from the
 * f32 value, not from hi + lo) */
static int split_tail_ok(const char *what, uint16_t *planes, const float *xf, int64_t on)
{
	int64_t bad = 0;

	for (int64_t k = 0; k < on / 32; k++) {
		const float *x = xf + 32 * k;
		double a = 0, m = 0;
		int16_t q[32];
		float sc;
		for (int j = 0; j < 32; j++) {
			a += x[j];
			m += fabs(x[j]);
		}
		q16_block(x, q, &sc);
		int off = !(fabs(split_sums(planes, on)[k] - a) <= 1e-6 * m) ||
			  !(fabsf(split_scales(planes, on)[k] - sc) <= 1e-4f * sc);      /* NaN too */
		for (int j = 0; j < 32; j++)
			off |= abs(split_q16(planes, on)[32 * k + j] - q[j]) > 1;
		if (off && bad++ < 5)
			diag("%s: block %lld of 32: sum %.9g (want %.9g), scale %.9g (want %.9g)", what, (long long)k,
			     split_sums(planes, on)[k], a, split_scales(planes, on)[k], sc);
	}
	return !bad;
}

/*
 * Passes of more than 16 rows (prompts) run attn_prompt.cu's tensor-core
 * kernel where it takes D, attn_decode elsewhere (D 32 and 96 here).
 *
 * Tolerance. The kernel splits each f32 operand into bf16 hi + lo
 * (|x - hi - lo| <= 2^-16 |x|) and sums three products a term, hi hi +
 * hi lo + lo hi, leaving out lo lo (<= 2^-16 of the term): each term of a
 * score q.k or of an output sum p v is off by at most 3 2^-16 relative, in
 * random directions, and the f32 sums add a few 2^-24. With unit-variance
 * inputs a score (about 1 after the scale) is then off by about 2^-16, and
 * so is each weight p relative to itself and the output: NMSE near 2^-32,
 * 2e-11 to 8e-11 measured in a CPU emulation of the kernel's tiling and
 * arithmetic. The bound 1e-9 (the CUDA-core kernel's, above) holds that
 * with a margin of ten; bf16 operands alone (2^-8 a term) measured 7e-6
 * there, and leaving out either cross term (the lo half of K and V lost)
 * 5e-6. A wrong element (an index or the mask) is an O(1) error against the
 * max-abs bound 1e-3 (measured: 3e-5 at most).
 *
 * A row's result does not depend on the other rows of its pass
 * (attn_prompt.cuh), so each row alone at its own position must give it bit
 * for bit: that also shows the pass took the prompt kernel. Cache rows past
 * the pass are NaN: a read of one shows.
 */
static void test_attention_prompt(void)
{
	static const int cfg[][5] = { /* pos0, n, Hq/Hkv, D, Hkv */
		{ 0, 17, 1, 64, 2 }, { 30, 17, 6, 256, 1 }, { 0, 64, 4, 256, 1 }, { 14, 64, 1, 128, 2 },
		{ 0, 100, 6, 128, 1 }, { 30, 100, 2, 64, 2 }, { 0, 257, 2, 64, 2 }, { 0, 257, 4, 256, 2 },
		{ 1000, 257, 6, 256, 1 }, { 3, 257, 1, 128, 1 }, { 4096, 33, 4, 128, 1 },
		{ 62, 100, 4, 256, 4 },         /* Qwen3.5 9B's heads */
		{ 7, 64, 6, 256, 4 },           /* 27B's */
		{ 5, 40, 2, 32, 2 }, { 0, 100, 4, 96, 1 },     /* head_dims left to attn_decode */
	};
	for (unsigned c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
		int64_t pos0 = cfg[c][0];
		int n = cfg[c][1], Hkv = cfg[c][4], Hq = Hkv * cfg[c][2], D = cfg[c][3];
		int flash = tf_cuda_attn_prompt_takes(D, Hq, Hkv);
		int64_t T = 2LL * (Hq + Hkv) * D;      /* the model's token stride: q and gate, k, v */
		int64_t cap = pos0 + n + 8, kv = cap * Hkv * D, qn = n * T, on = (int64_t)n * Hq * D, hd = (int64_t)Hq * D;
		float *qg = fresh(qn, 1), *kc = fresh(kv, 1), *vc = fresh(kv, 1), *want = malloc(4 * on), *got = malloc(4 * on);
		float *qd = malloc(4 * (int64_t)n * 2 * hd);
		uint16_t *g16 = malloc(split_bytes(on)), *one16 = malloc(4 * on), *d16 = tf_cuda_alloc(split_bytes(on), "test");
		uint16_t *d1 = tf_cuda_alloc(split_bytes(hd), "test");
		char what[96];

		for (int64_t i = (pos0 + n) * Hkv * D; i < kv; i++)
			kc[i] = vc[i] = NAN;
		for (int t = 0; t < n; t++)
			memcpy(qd + t * 2 * hd, qg + t * T, 8 * hd);
		float *dq = dev_f32(qg, qn), *dk = dev_f32(kc, kv), *dv = dev_f32(vc, kv);
		int64_t *dp = dev_copy(&pos0, 8);

		snprintf(what, sizeof what, "%s attention pos %lld, %d rows, %d/%d heads, D %d",
			 flash ? "prompt" : "fallback", (long long)pos0, n, Hq, Hkv, D);
		attn_ref(qd, kc, vc, pos0, n, Hq, Hkv, D, want);
		dev_poison(d16, split_bytes(on));
		DIE_IF(tf_cuda_attention(dq, T, dk, dv, dp, n, Hq, Hkv, D, d16, NULL));
		dev_get(g16, d16, split_bytes(on));
		join_split(g16, on, got);
		ok(close_enough(what, got, want, on, D, 1e-9, 1e-3), "%s matches a float64 reference", what);
		ok(split_tail_ok(what, g16, got, on), "%s: sums and int16 form follow the planes", what);
		for (int t = 0; t < n; t++) {
			int64_t p = pos0 + t;
			DIE_IF(tf_cuda_upload(dp, &p, 8));
			if (flash)
				DIE_IF(tf_cuda_attn_prompt(dq + t * T, T, dk, dv, dp, 1, Hq, Hkv, D, d1));
			else
				DIE_IF(tf_cuda_attention(dq + t * T, T, dk, dv, dp, 1, Hq, Hkv, D, d1, NULL));
			dev_get(one16 + t * hd, d1, 2 * hd);
			dev_get(one16 + on + t * hd, d1 + hd, 2 * hd);
		}
		ok(!memcmp(one16, g16, 4 * on), "%s: rows alone equal the pass", what);
		free(qg); free(kc); free(vc); free(want); free(got); free(qd); free(g16); free(one16);
		tf_cuda_free(d16); tf_cuda_free(d1); tf_cuda_free(dq); tf_cuda_free(dk); tf_cuda_free(dv); tf_cuda_free(dp);
	}
}

static void test_conv(void)
{
	int n = 7, C = 1000, K = 4;
	float *w = fresh(C * K, 1), *st = fresh((K - 1) * C, 1), *m = fresh(n * C, 1), *want = malloc(4 * n * C);
	float *got = malloc(4 * n * C), *sgot = malloc(4 * (K - 1) * C), *swant = malloc(4 * (K - 1) * C);
	float *ext = malloc(4 * (K - 1 + n) * C);
	float *dw = dev_f32(w, C * K), *ds = dev_f32(st, (K - 1) * C), *dm = dev_f32(m, n * C), *dc = dev_zero(n * C);

	memcpy(ext, st, 4 * (K - 1) * C);
	memcpy(ext + (K - 1) * C, m, 4 * n * C);
	for (int t = 0; t < n; t++)
		for (int ch = 0; ch < C; ch++) {
			double s = 0;
			for (int k = 0; k < K; k++)
				s += (double)w[ch * K + k] * ext[(t + k) * C + ch];
			want[t * C + ch] = (float)(s / (1 + exp(-s)));
		}
	memcpy(swant, ext + n * C, 4 * (K - 1) * C);
	DIE_IF(tf_cuda_conv(dw, ds, dm, C, n, C, K, dc));
	dev_get(got, dc, 4 * n * C);
	dev_get(sgot, ds, 4 * (K - 1) * C);
	ok(close_enough("conv 7 x 1000, K 4", got, want, n * C, C, 1e-11, 1e-5), "causal conv + SiLU matches a float64 reference");
	ok(same_bits("conv state", sgot, swant, (K - 1) * C), "conv state holds the last K-1 inputs");
	/* token by token from the same state */
	float *one = malloc(4 * n * C);
	DIE_IF(tf_cuda_upload(ds, st, 4 * (K - 1) * C));
	for (int t = 0; t < n; t++)
		DIE_IF(tf_cuda_conv(dw, ds, dm + t * C, C, 1, C, K, dc + t * C));
	dev_get(one, dc, 4 * n * C);
	ok(same_bits("conv steps", one, got, n * C), "conv token by token equals the window");
	free(w); free(st); free(m); free(want); free(got); free(sgot); free(swant); free(ext); free(one);
	tf_cuda_free(dw); tf_cuda_free(ds); tf_cuda_free(dm); tf_cuda_free(dc);
}

static void test_gdn(int Hk, int Hv, int Dk, int Dv, int n)
{
	int64_t kd = (int64_t)Hk * Dk, C = 2 * kd + (int64_t)Hv * Dv, sn = (int64_t)Hv * Dk * Dv, on = (int64_t)n * Hv * Dv;
	float *qkv = fresh(n * C, 1), *b = fresh(n * Hv, 2), *a = fresh(n * Hv, 2), *Al = fresh(Hv, 1), *dt = fresh(Hv, 1);
	float *S0 = fresh(sn, 0.1f), *o = malloc(4 * on), *S = malloc(4 * sn), *ogot = malloc(4 * on), *Sgot = malloc(4 * sn);
	double *Sd = malloc(8 * sn);
	char what[96];

	snprintf(what, sizeof what, "Gated DeltaNet Hk %d Hv %d Dk %d Dv %d, %d tokens", Hk, Hv, Dk, Dv, n);
	/* float64 reference: prep, then the recurrence */
	for (int64_t i = 0; i < sn; i++)
		Sd[i] = S0[i];
	float *q2 = malloc(4 * n * C);
	memcpy(q2, qkv, 4 * n * C);
	for (int t = 0; t < n; t++)
		for (int hh = 0; hh < 2 * Hk; hh++) {
			float *x = q2 + t * C + hh * Dk;
			double ss = 0;
			for (int i = 0; i < Dk; i++)
				ss += (double)x[i] * x[i];
			double inv = 1 / sqrt(ss + 1e-6) * (hh < Hk ? 1 / sqrt((double)Dk) : 1);
			for (int i = 0; i < Dk; i++)
				x[i] = (float)(x[i] * inv);
		}
	double *al = malloc(8 * n * Hv), *be = malloc(8 * n * Hv), *od = malloc(8 * on);
	for (int64_t i = 0; i < (int64_t)n * Hv; i++) {
		const int h = i % Hv;
		double av = (double)a[i] + dt[h], sp = av > 20 ? av : log1p(exp(av));
		al[i] = exp(-exp((double)Al[h]) * sp);
		be[i] = 1 / (1 + exp(-(double)b[i]));
	}
	delta_rule64(Hk, Hv, Dk, Dv, n, q2, al, be, Hv, Sd, od);
	for (int64_t i = 0; i < on; i++)
		o[i] = (float)od[i];
	free(al); free(be); free(od);
	for (int64_t i = 0; i < sn; i++)
		S[i] = (float)Sd[i];

	float *dq = dev_f32(qkv, n * C), *db = dev_f32(b, n * Hv), *da = dev_f32(a, n * Hv), *dA = dev_f32(Al, Hv), *dd = dev_f32(dt, Hv);
	float *dS = dev_f32(S0, sn), *dO = dev_zero(on);
	DIE_IF(tf_cuda_gdn_prep(dq, db, da, Hv, dA, dd, n, Hk, Hv, Dk, Dv));
	DIE_IF(tf_cuda_gdn_step(dq, db, da, Hv, dS, n, Hk, Hv, Dk, Dv, dO));
	dev_get(ogot, dO, 4 * on);
	dev_get(Sgot, dS, 4 * sn);
	ok(close_enough(what, ogot, o, on, Dv, 1e-9, 1e30), "%s: outputs match a float64 reference", what);
	ok(close_enough(what, Sgot, S, sn, Dv, 1e-9, 1e30), "%s: final state matches", what);
	/* token by token */
	float *one = malloc(4 * on), *Sone = malloc(4 * sn);
	DIE_IF(tf_cuda_upload(dS, S0, 4 * sn));
	for (int t = 0; t < n; t++) {   /* synced: the state is read before the wait */
		DIE_IF(tf_cuda_gdn_step(dq + t * C, db + t * Hv, da + t * Hv, Hv, dS, 1, Hk, Hv, Dk, Dv, dO + (int64_t)t * Hv * Dv));
		DIE_IF(tf_cuda_sync());
	}
	dev_get(one, dO, 4 * on);
	dev_get(Sone, dS, 4 * sn);
	ok(same_bits(what, one, ogot, on) && same_bits(what, Sone, Sgot, sn), "%s: token by token equals the window", what);
	free(qkv); free(b); free(a); free(Al); free(dt); free(S0); free(o); free(S); free(ogot); free(Sgot); free(Sd);
	free(q2); free(one); free(Sone);
	tf_cuda_free(dq); tf_cuda_free(db); tf_cuda_free(da); tf_cuda_free(dA); tf_cuda_free(dd); tf_cuda_free(dS); tf_cuda_free(dO);
}

/* the largest magnitude of n floats */
static double max_abs(const float *x, int64_t n)
{
	double m = 0;

	for (int64_t i = 0; i < n; i++)
		if (fabs(x[i]) > m)
			m = fabs(x[i]);
	return m;
}

/*
 * The chunked delta rule of prompt passes against a float64 recurrence run
 * on the inputs the kernel sees (prep's q, k, beta and g, downloaded), from
 * a nonzero state: outputs and final state, once in one call and once in
 * two calls that split the tokens off a chunk boundary (the state carried
 * between them, as prompt slices carry it). Gates as a model makes them:
 * A_log in [-5, 1), so some heads forget within a token and some keep their
 * state over several chunks.
 *
 * Tolerance: the kernel's products see operands rounded to 16 significant
 * bits (bf16 hi + lo, 2^-17 relative) with f32 accumulation. Run in C with
 * the same steps and roundings (t/helper/gdn-chunk-model), inputs like these
 * land within 2e-5 of the largest float64 value with NMSE near 1e-10 (4e-5
 * and 3e-10 when a chunk's keys are nearly parallel); the f32 CPU forms
 * within 2e-6. Max error 1e-4 of the largest value and NMSE 1e-9 leave room
 * for the tensor cores' own summation order, while a wrong index, mask or
 * decay (errors the size of the values) or a dropped lo term (bf16 operands
 * alone: 4e-3 to 7e-3) fails.
 */
static void test_gdn_chunk(int Hk, int Hv, int Dk, int Dv, int n)
{
	int64_t kd = (int64_t)Hk * Dk, C = 2 * kd + (int64_t)Hv * Dv, ld = Hv + 3, sn = (int64_t)Hv * Dk * Dv;
	int64_t on = (int64_t)n * Hv * Dv;
	float *qkv = fresh(n * C, 1), *b = fresh(n * ld, 2), *a = fresh(n * ld, 1), *Al = malloc(4 * Hv), *dt = fresh(Hv, 1);
	float *S0 = fresh(sn, 0.1f), *want = malloc(4 * on), *Sw = malloc(4 * sn), *got = malloc(4 * on), *Sg = malloc(4 * sn);
	double *Sd = malloc(8 * sn);
	char what[96];

	snprintf(what, sizeof what, "chunked Gated DeltaNet Hk %d Hv %d Dk %d Dv %d, %d tokens", Hk, Hv, Dk, Dv, n);
	for (int h = 0; h < Hv; h++)
		Al[h] = 3 * rng_unit() - 2;
	float *dq = dev_f32(qkv, n * C), *db = dev_f32(b, n * ld), *da = dev_f32(a, n * ld), *dA = dev_f32(Al, Hv);
	float *dd = dev_f32(dt, Hv), *dS = dev_f32(S0, sn), *dO = dev_zero(on);
	DIE_IF(tf_cuda_gdn_prep(dq, db, da, ld, dA, dd, n, Hk, Hv, Dk, Dv));
	dev_get(qkv, dq, 4 * n * C);
	dev_get(b, db, 4 * n * ld);
	dev_get(a, da, 4 * n * ld);

	/* float64 reference on the prepped values */
	for (int64_t i = 0; i < sn; i++)
		Sd[i] = S0[i];
	double *od = malloc(8 * on);
	delta_rule64_f(Hk, Hv, Dk, Dv, n, qkv, b, a, ld, Sd, od);
	for (int64_t i = 0; i < on; i++)
		want[i] = (float)od[i];
	free(od);
	for (int64_t i = 0; i < sn; i++)
		Sw[i] = (float)Sd[i];
	double om = max_abs(want, on), sm = max_abs(Sw, sn);

	dev_poison(dO, 4 * on);
	DIE_IF(tf_cuda_gdn_chunk(dq, db, da, ld, dS, n, Hk, Hv, Dk, Dv, dO));
	dev_get(got, dO, 4 * on);
	dev_get(Sg, dS, 4 * sn);
	ok(close_enough(what, got, want, on, Dv, 1e-9, 1e-4 * om), "%s: outputs match a float64 recurrence", what);
	ok(close_enough(what, Sg, Sw, sn, Dv, 1e-9, 1e-4 * sm), "%s: final state matches", what);

	/* in two calls, the first ending inside a chunk */
	int n1 = n / 2 + 1, n2 = n - n1;
	DIE_IF(tf_cuda_upload(dS, S0, 4 * sn));
	dev_poison(dO, 4 * on);
	DIE_IF(tf_cuda_gdn_chunk(dq, db, da, ld, dS, n1, Hk, Hv, Dk, Dv, dO));
	DIE_IF(tf_cuda_gdn_chunk(dq + n1 * C, db + n1 * ld, da + n1 * ld, ld, dS, n2, Hk, Hv, Dk, Dv,
				 dO + (int64_t)n1 * Hv * Dv));
	dev_get(got, dO, 4 * on);
	dev_get(Sg, dS, 4 * sn);
	ok(close_enough(what, got, want, on, Dv, 1e-9, 1e-4 * om) && close_enough(what, Sg, Sw, sn, Dv, 1e-9, 1e-4 * sm),
	   "%s: %d then %d tokens, the state carried between the calls, match too", what, n1, n2);
	free(qkv); free(b); free(a); free(Al); free(dt); free(S0); free(want); free(Sw); free(got); free(Sg); free(Sd);
	tf_cuda_free(dq); tf_cuda_free(db); tf_cuda_free(da); tf_cuda_free(dA); tf_cuda_free(dd); tf_cuda_free(dS);
	tf_cuda_free(dO);
}

/* the fused attention inputs of a decode step against the three kernels:
 * heads of 256, 128 and 64 take the fused kernel built for their size,
 * 96 the one for any size */
static void test_attn_prep(int D, int rot, int yarn)
{
	tf_rope_table t;
	float *dinv;
	if (yarn)
		DIE_IF(tf_rope_yarn(&t, 1e7, rot, 4, 4096, 32, 1, -1, 1));
	else
		tf_rope_default(&t, 1e7f, rot);
	tf_rope_freq fr = dev_freq(&t, &dinv);
	int n = 3, Hq = 8, Hkv = 2;
	char what[96];
	int64_t T = 2LL * Hq * D + 2LL * Hkv * D + 40, row = (int64_t)Hkv * D, cap = 12, pos = 5;
	float *x = fresh(n * T, 2), *qw = fresh(D, 1), *kw = fresh(D, 1);
	float *a = malloc(4 * n * T), *b = malloc(4 * n * T), *ka = malloc(4 * cap * row), *kb = malloc(4 * cap * row);
	float *va = malloc(4 * cap * row), *vb = malloc(4 * cap * row);
	float *dx = dev_f32(x, n * T), *dqw = dev_f32(qw, D), *dkw = dev_f32(kw, D), *dk = dev_zero(cap * row), *dv = dev_zero(cap * row);
	int64_t *dp = dev_copy(&pos, 8);
	float *k = dx + 2LL * Hq * D, *v = k + row;

	DIE_IF(tf_cuda_qk_norm_rope(dx, n, Hq, D, T, 2 * D, dqw, 1e-6f, rot, fr, dp));
	DIE_IF(tf_cuda_qk_norm_rope(k, n, Hkv, D, T, D, dkw, 1e-6f, rot, fr, dp));
	DIE_IF(tf_cuda_kv_append(k, v, T, n, row, dp, dk, dv));
	dev_get(a, dx, 4 * n * T);
	dev_get(ka, dk, 4 * cap * row);
	dev_get(va, dv, 4 * cap * row);
	DIE_IF(tf_cuda_upload(dx, x, 4 * n * T));
	DIE_IF(tf_cuda_zero(dk, 4 * cap * row));
	DIE_IF(tf_cuda_zero(dv, 4 * cap * row));
	DIE_IF(tf_cuda_attn_prep(dx, n, Hq, Hkv, D, T, dqw, dkw, 1e-6f, rot, fr, dp, dk, dv));
	dev_get(b, dx, 4 * n * T);
	dev_get(kb, dk, 4 * cap * row);
	dev_get(vb, dv, 4 * cap * row);
	snprintf(what, sizeof what, "fused q/k norm, %s rotary and cache append (D %d, rot %d)", yarn ? "yarn" : "plain",
		 D, rot);
	ok(same_bits("attention inputs", b, a, n * T) && same_bits("key cache", kb, ka, cap * row) &&
	   same_bits("value cache", vb, va, cap * row), "%s equal the three kernels bit for bit", what);
	free(x); free(qw); free(kw); free(a); free(b); free(ka); free(kb); free(va); free(vb);
	tf_cuda_free(dx); tf_cuda_free(dqw); tf_cuda_free(dkw); tf_cuda_free(dk); tf_cuda_free(dv); tf_cuda_free(dp);
	tf_cuda_free(dinv);
	tf_rope_free(&t);
}

/* the fused decode inputs of Gated DeltaNet against conv, then prep */
static void test_gdn_in(int Hk, int Hv, int Dk, int Dv, int n, int K)
{
	int64_t kd = (int64_t)Hk * Dk, C = 2 * kd + (int64_t)Hv * Dv, ld = C + 2 * Hv + 3;   /* m, b, a in one row */
	float *w = fresh(C * K, 1), *st = fresh((K - 1) * C, 1), *row = fresh(n * ld, 1), *Al = fresh(Hv, 1), *dt = fresh(Hv, 1);
	float *want = malloc(4 * n * C), *got = malloc(4 * n * C), *one = malloc(4 * n * C);
	float *rw = malloc(4 * n * ld), *rg = malloc(4 * n * ld), *sw = malloc(4 * (K - 1) * C), *sg = malloc(4 * (K - 1) * C);
	float *dw = dev_f32(w, C * K), *ds = dev_f32(st, (K - 1) * C), *dr = dev_f32(row, n * ld), *dA = dev_f32(Al, Hv);
	float *dd = dev_f32(dt, Hv), *dc = dev_zero(n * C);
	char what[96];

	snprintf(what, sizeof what, "fused DeltaNet inputs Hk %d Hv %d Dk %d, K %d, %d tokens", Hk, Hv, Dk, K, n);
	/* the two kernels */
	DIE_IF(tf_cuda_conv(dw, ds, dr, ld, n, C, K, dc));
	DIE_IF(tf_cuda_gdn_prep(dc, dr + C, dr + C + Hv, ld, dA, dd, n, Hk, Hv, Dk, Dv));
	dev_get(want, dc, 4 * n * C);
	dev_get(rw, dr, 4 * n * ld);
	dev_get(sw, ds, 4 * (K - 1) * C);
	/* the one */
	DIE_IF(tf_cuda_upload(ds, st, 4 * (K - 1) * C));
	DIE_IF(tf_cuda_upload(dr, row, 4 * n * ld));
	int rc = tf_cuda_gdn_in(dw, ds, dr, ld, n, C, K, dc, dr + C, dr + C + Hv, ld, dA, dd, Hk, Hv, Dk);
	DIE_IF(rc);
	ok(rc == 0, "%s: taken", what);
	dev_get(got, dc, 4 * n * C);
	dev_get(rg, dr, 4 * n * ld);
	dev_get(sg, ds, 4 * (K - 1) * C);
	ok(close_enough(what, got, want, n * C, C, 1e-12, 1e-5), "%s: q, k, v match conv then prep", what);
	ok(same_bits(what, rg, rw, n * ld) && same_bits(what, sg, sw, (K - 1) * C), "%s: gates and conv state equal theirs", what);
	/* token by token */
	DIE_IF(tf_cuda_upload(ds, st, 4 * (K - 1) * C));
	DIE_IF(tf_cuda_upload(dr, row, 4 * n * ld));
	for (int t = 0; t < n; t++) {   /* synced: the state is read before the wait, as in a step it may be */
		DIE_IF(tf_cuda_gdn_in(dw, ds, dr + t * ld, ld, 1, C, K, dc + t * C, dr + t * ld + C, dr + t * ld + C + Hv, ld,
				      dA, dd, Hk, Hv, Dk));
		DIE_IF(tf_cuda_sync());
	}
	dev_get(one, dc, 4 * n * C);
	ok(same_bits(what, one, got, n * C), "%s: token by token equals the window", what);
	free(w); free(st); free(row); free(Al); free(dt); free(want); free(got); free(one); free(rw); free(rg); free(sw); free(sg);
	tf_cuda_free(dw); tf_cuda_free(ds); tf_cuda_free(dr); tf_cuda_free(dA); tf_cuda_free(dd); tf_cuda_free(dc);
}

/* gdn_win's input for the output projection against o and the gates of
 * rows at row (token stride ld, z after the C conv inputs): each 32
 * columns' codes and scale those of o w silu(z) (the kernel's silu is
 * the approximate one, so a code at a rounding edge may be one off), their
 * sum, and the sum of o^2 */
static int gnorm_form_ok(const char *what, const float *o, const float *row, int64_t ld, int64_t C, const float *gw,
			 int Hv, int Dv, int n, uint16_t *h16, const float *sq)
{
	int64_t on = (int64_t)n * Hv * Dv;
	const float *sums = split_sums(h16, on), *scales = split_scales(h16, on);
	const int16_t *q = split_q16(h16, on);
	int bad = 0;

	for (int64_t b = 0; b < on / 32 && bad < 5; b++) {
		int64_t t = b / (Hv * Dv / 32), c0 = 32 * b - t * Hv * Dv;   /* token, first column */
		float v[32], d;
		int16_t want[32];
		double s = 0, a = 0, ss = 0;
		for (int k = 0; k < 32; k++) {
			const float x = o[32 * b + k];
			v[k] = x * gw[(c0 + k) % Dv] * tf_silu(row[t * ld + C + c0 + k]);
			s += v[k];
			a += fabs(v[k]);
			ss += (double)x * x;
		}
		q16_block(v, want, &d);
		int codes = 1;
		for (int k = 0; k < 32; k++)
			codes &= abs(q[32 * b + k] - want[k]) <= 1;
		if (!codes || fabsf(scales[b] - d) > 1e-6f * d || fabs(sums[b] - s) > 1e-5 * a ||
		    fabs(sq[b] - ss) > 1e-6 * ss) {
			diag("%s: block %lld: scale %g (want %g), sum %g (%g), squares %g (%g), codes %s", what,
			     (long long)b, scales[b], d, sums[b], s, sq[b], ss, codes ? "near" : "off");
			bad++;
		}
	}
	return !bad;
}

/* the decode window's one launch against gdn_in then the delta rule: the
 * same bits for outputs, both states and every row it reads; windows
 * against tokens one at a time */
static void test_gdn_win(int Hk, int Hv, int Dk, int Dv, int n, int K)
{
	int64_t kd = (int64_t)Hk * Dk, C = 2 * kd + (int64_t)Hv * Dv, ld = C + (int64_t)Hv * Dv + 2 * Hv + 5;
	int64_t sn = (int64_t)Hv * Dk * Dv, on = (int64_t)n * Hv * Dv, bo = C + (int64_t)Hv * Dv;
	float *w = fresh(C * K, 1), *st = fresh((K - 1) * C, 1), *row = fresh(n * ld, 1), *Al = fresh(Hv, 1);
	float *dt = fresh(Hv, 1), *S0 = fresh(sn, 0.3f);
	float *o[3], *S[3], *cs[3], *rows;
	float *dw = dev_f32(w, C * K), *dA = dev_f32(Al, Hv), *dd = dev_f32(dt, Hv);
	float *ds = dev_f32(st, (K - 1) * C), *dr = dev_f32(row, n * ld), *dS = dev_f32(S0, sn), *dO = dev_zero(on);
	float *dc = dev_zero(n * C);
	unsigned *cnt = tf_cuda_alloc(4 * Hk, "test");
	char what[96];

	DIE_IF(tf_cuda_zero(cnt, 4 * Hk));
	for (int k = 0; k < 3; k++) {
		o[k] = malloc(4 * on);
		S[k] = malloc(4 * sn);
		cs[k] = malloc(4 * (K - 1) * C);
	}
	rows = malloc(4 * n * ld);
	snprintf(what, sizeof what, "DeltaNet window Hk %d Hv %d Dk %d Dv %d, K %d, %d tokens", Hk, Hv, Dk, Dv, K, n);
	/* the two kernels (gdn_in writes beta and g over b and a, so it gets a copy) */
	DIE_IF(tf_cuda_gdn_in(dw, ds, dr, ld, n, C, K, dc, dr + bo, dr + bo + Hv, ld, dA, dd, Hk, Hv, Dk));
	DIE_IF(tf_cuda_gdn_step(dc, dr + bo, dr + bo + Hv, ld, dS, n, Hk, Hv, Dk, Dv, dO));
	dev_get(o[0], dO, 4 * on);
	dev_get(S[0], dS, 4 * sn);
	dev_get(cs[0], ds, 4 * (K - 1) * C);
	/* the one */
	DIE_IF(tf_cuda_upload(ds, st, 4 * (K - 1) * C));
	DIE_IF(tf_cuda_upload(dr, row, 4 * n * ld));
	DIE_IF(tf_cuda_upload(dS, S0, 4 * sn));
	dev_poison(dO, 4 * on);
	/* with the output projection's input made too (gdn_win.cuh) */
	float *gw = fresh(Dv, 1), *dgw = dev_f32(gw, Dv), *dsq = dev_zero(on / 32);
	uint16_t *d16 = tf_cuda_alloc(split_bytes(on), "test");
	int rc = tf_cuda_gdn_win(dr, ld, n, dw, ds, K, dA, dd, dS, Hk, Hv, Dk, Dv, dO, cnt, dgw, d16, dsq);
	DIE_IF(rc);
	ok(rc == 0, "%s: taken", what);
	dev_get(o[1], dO, 4 * on);
	dev_get(S[1], dS, 4 * sn);
	dev_get(cs[1], ds, 4 * (K - 1) * C);
	dev_get(rows, dr, 4 * n * ld);
	ok(same_bits(what, o[1], o[0], on) && same_bits(what, S[1], S[0], sn),
	   "%s: outputs and state equal gdn_in then gdn_step", what);
	ok(same_bits(what, cs[1], cs[0], (K - 1) * C), "%s: the conv state equals gdn_in's", what);
	ok(same_bits(what, rows, row, n * ld), "%s: the rows it reads are left as they were", what);
	uint16_t *h16 = malloc(split_bytes(on));
	float *hsq = malloc(4 * (on / 32));
	dev_get(h16, d16, split_bytes(on));
	dev_get(hsq, dsq, 4 * (on / 32));
	ok(gnorm_form_ok(what, o[1], row, ld, C, gw, Hv, Dv, n, h16, hsq),
	   "%s: the output projection's input is the int16 form of o w silu(z), with o's sums of squares", what);
	/* token by token, the counters reused; a sync between launches, as the
	 * states are read before the wait (gdn_win.cuh) */
	DIE_IF(tf_cuda_upload(ds, st, 4 * (K - 1) * C));
	DIE_IF(tf_cuda_upload(dS, S0, 4 * sn));
	uint16_t *t16 = tf_cuda_alloc(split_bytes(Hv * Dv), "test"), *g16 = malloc(split_bytes(on));
	float *tsq = dev_zero(Hv * Dv / 32), *gsq = malloc(4 * (on / 32));
	for (int t = 0; t < n; t++) {
		DIE_IF(tf_cuda_gdn_win(dr + t * ld, ld, 1, dw, ds, K, dA, dd, dS, Hk, Hv, Dk, Dv, dO + (int64_t)t * Hv * Dv,
				       cnt, dgw, t16, tsq));
		DIE_IF(tf_cuda_sync());
		/* token t's rows of the window's form */
		int64_t vd = (int64_t)Hv * Dv;
		dev_get(split_sums(g16, on) + t * vd / 32, split_sums(t16, vd), 4 * (vd / 32));
		dev_get(split_scales(g16, on) + t * vd / 32, split_scales(t16, vd), 4 * (vd / 32));
		dev_get(split_q16(g16, on) + t * vd, split_q16(t16, vd), 2 * vd);
		dev_get(gsq + t * vd / 32, tsq, 4 * (vd / 32));
	}
	ok(same_bits(what, split_sums(g16, on), split_sums(h16, on), on / 16) &&
	   !memcmp(split_q16(g16, on), split_q16(h16, on), 2 * on) && same_bits(what, gsq, hsq, on / 32),
	   "%s: token by token, the same int16 form and sums of squares", what);
	free(h16); free(hsq); free(g16); free(gsq); free(gw);
	tf_cuda_free(t16); tf_cuda_free(tsq); tf_cuda_free(d16); tf_cuda_free(dsq); tf_cuda_free(dgw);
	dev_get(o[2], dO, 4 * on);
	dev_get(S[2], dS, 4 * sn);
	dev_get(cs[2], ds, 4 * (K - 1) * C);
	unsigned *hc = malloc(4 * Hk);
	dev_get(hc, cnt, 4 * Hk);
	int zero = 1;
	for (int k = 0; k < Hk; k++)
		zero &= hc[k] == 0;
	ok(same_bits(what, o[2], o[1], on) && same_bits(what, S[2], S[1], sn) &&
	   same_bits(what, cs[2], cs[1], (K - 1) * C), "%s: token by token equals the window", what);
	ok(zero, "%s: the arrival counters are back to zero", what);
	for (int k = 0; k < 3; k++) {
		free(o[k]); free(S[k]); free(cs[k]);
	}
	free(rows); free(hc);
	free(w); free(st); free(row); free(Al); free(dt); free(S0);
	tf_cuda_free(dw); tf_cuda_free(dA); tf_cuda_free(dd); tf_cuda_free(ds); tf_cuda_free(dr); tf_cuda_free(dS);
	tf_cuda_free(dO); tf_cuda_free(dc); tf_cuda_free(cnt);
}

static void test_act(void)
{
	int rows = 3;
	int64_t I = 33335, n = rows * I;
	float *gu = fresh(2 * n, 3), *g = fresh(n, 3), *want = malloc(4 * n), *got = malloc(4 * n);
	uint16_t *h = malloc(4 * n), *d16 = tf_cuda_alloc(split_bytes(n), "test");
	float *dgu = dev_f32(gu, 2 * n), *dg = dev_f32(g, n);

	/* gate then up in each row of 2I, as the fused product leaves them */
	for (int64_t i = 0; i < n; i++)
		want[i] = tf_silu(gu[i / I * 2 * I + i % I]) * gu[i / I * 2 * I + I + i % I];
	DIE_IF(tf_cuda_swiglu(dgu, 2 * I, rows, I, d16));
	dev_get(h, d16, 4 * n);
	join_split(h, n, got);
	ok(close_enough("swiglu 3 x 33335", got, want, n, I, 1e-9, 1e30), "swiglu matches silu(g) * u");
	DIE_IF(tf_cuda_to_bf16(dg, n, d16));
	dev_get(h, d16, 4 * n);
	int same = 1;
	for (int64_t i = 0; i < n; i++)
		same &= h[i] == tf_f32_to_bf16(g[i]) &&
			h[n + i] == tf_f32_to_bf16(g[i] - tf_bf16_to_f32(tf_f32_to_bf16(g[i])));
	ok(same, "to_bf16 splits like tf_f32_to_bf16: the value, then what it left out");

	/* whole blocks of 32: the int16 form, as the host makes it */
	int64_t m = 32 * 1001;
	uint16_t *hq = malloc(split_bytes(m));
	int16_t *q = malloc(2 * m);
	float *sc = malloc(4 * m / 32);
	DIE_IF(tf_cuda_to_bf16(dg, m, d16));
	dev_get(hq, d16, split_bytes(m));
	same = 1;
	for (int64_t k = 0; k < m / 32; k++) {
		q16_block(g + 32 * k, q + 32 * k, sc + k);
		same &= !memcmp(&sc[k], split_scales(hq, m) + k, 4);
	}
	same &= !memcmp(q, split_q16(hq, m), 2 * m);
	ok(same, "the int16 form: codes rint(x * 32767 (1 / max|x|)) and scale max|x| (1 / 32767) per 32 values");
	free(hq); free(q); free(sc);
	free(gu); free(g); free(want); free(got); free(h);
	tf_cuda_free(d16); tf_cuda_free(dgu); tf_cuda_free(dg);
}

static void test_draws(void)
{
	int n = 5, V = 248320;
	float *l = fresh((int64_t)n * V, 4);
	int32_t got[5], *dout = tf_cuda_alloc(split_bytes(n), "test");
	tf_draw_args a[5];

	l[3 * (int64_t)V + 17] = l[3 * (int64_t)V + 200000] = 1e4f;  /* a tie: the first wins */
	l[4 * (int64_t)V + V - 1] = 1e4f;                             /* the last id */
	float *dl = dev_f32(l, (int64_t)n * V);
	DIE_IF(tf_cuda_draw_reserve(n, V));
	DIE_IF(tf_cuda_argmax(dl, n, V, dout, NULL));
	dev_get(got, dout, 4 * n);
	int same = 1;
	for (int r = 0; r < n; r++)
		same &= got[r] == tf_argmax(l + (int64_t)r * V, V);
	ok(same, "argmax equals tf_argmax on 5 rows of 248320, ties to the first");

	tf_sampler s = { .temp = 0.7f, .top_p = 1, .rng = 42 };
	tf_sampler s2 = s;
	int32_t want[5];
	for (int r = 0; r < n; r++) {
		want[r] = tf_sample(&s, l + (int64_t)r * V, V);
		a[r] = (tf_draw_args){ .u = tf_sample_uniform(&s2), .temp = 0.7f, .top_p = 1 };
	}
	tf_draw_args *da = dev_copy(a, sizeof a);
	DIE_IF(tf_cuda_sample(dl, n, V, da, dout, NULL));
	dev_get(got, dout, 4 * n);
	same = 1;
	for (int r = 0; r < n; r++) {
		if (got[r] != want[r])
			diag("row %d: device drew %d, tf_sample %d", r, got[r], want[r]);
		same &= got[r] == want[r];
	}
	ok(same, "temperature draws equal tf_sample's for the same uniform numbers");
	free(l);
	tf_cuda_free(dl); tf_cuda_free(dout); tf_cuda_free(da);
}

static void test_embed_gemm(void)
{
	/* 512 columns */
	static const int forms[][3] = { { TF_BF16, 16, 0 }, { TF_F32, 32, 0 }, { TF_F16, 16, 0 }, { TF_SIGN1, 1, 128 },
					{ TF_AFFINE, 3, 64 }, { TF_AFFINE, 4, 64 }, { TF_AFFINE, 8, 32 }, { TF_AFFINE, 2, 128 },
					{ TF_AFFINE, 4, 32 } };
	int64_t rows = 300, cols = 512;
	int32_t ids[4] = { 0, 299, 17, 17 };
	for (unsigned f = 0; f < sizeof forms / sizeof *forms; f++) {
		tf_weight w = make_weight(forms[f][0], rows, cols, forms[f][1], forms[f][2]), dw;
		tf_cuda_arena a;
		float *want = malloc(4 * 4 * cols), *got = malloc(4 * 4 * cols);
		char what[64];

		snprintf(what, sizeof what, "%s%d rows", tf_fmt_name(w.fmt), w.bits);
		DIE_IF(tf_cuda_arena_open(&a, tf_cuda_weight_bytes(&w), "test"));
		DIE_IF(tf_cuda_weight_upload(&a, &w, &dw));
		int32_t *di = dev_copy(ids, sizeof ids);
		float *dout = dev_zero(4 * cols);
		for (int i = 0; i < 4; i++)
			tf_embed(&w, ids[i], want + i * cols);
		DIE_IF(tf_cuda_embed(&dw, di, 4, dout));
		dev_get(got, dout, 4 * 4 * cols);
		ok(close_enough(what, got, want, 4 * cols, cols, 1e-12, 1e-6), "embedding %s match tf_embed", what);

		/* prompt GEMM: 100 input rows against tf_matmul */
		int n = 100;
		uint16_t *xh = malloc(split_bytes(n * cols));
		float *xf = malloc(4 * n * cols), *yw = malloc(4 * n * rows), *yg = malloc(4 * n * rows);
		fill_split(xh, xf, n * cols, 1);
		tf_matmul(&w, xf, n, yw);
		uint16_t *dx = dev_copy(xh, split_bytes(n * cols));
		float *dy = dev_zero(n * rows);
		DIE_IF(tf_cuda_gemm(&dw, dx, n, dy, 0));
		dev_get(yg, dy, 4 * n * rows);
		snprintf(what, sizeof what, "gemm %s%d 100 x %lld x %lld", tf_fmt_name(w.fmt), w.bits, (long long)rows, (long long)cols);
		/* weights taken to bf16 first: f32, f16 and affine forms round */
		ok(close_enough(what, yg, yw, n * rows, rows, w.fmt == TF_BF16 || w.fmt == TF_SIGN1 ? 1e-11 : 2e-5, 1e30),
		   "%s matches tf_matmul", what);
		free(xh); free(xf); free(yw); free(yg);
		tf_cuda_free(dx); tf_cuda_free(dy); tf_cuda_free(di); tf_cuda_free(dout);
		tf_cuda_arena_close(&a);
		free_weight(&w);
		free(want); free(got);
	}
}

int main(void)
{
	unsetenv("TF_ATTN_PROMPT");     /* the prompt kernel is what the prompt tests test */
	cuda_or_skip();
	test_rmsnorm();
	test_gated_norm();
	{
		tf_rope_table t;
		tf_rope_default(&t, 1e7f, 64);
		test_rope(&t, "plain");
		tf_rope_free(&t);
		/* yarn as a 4x stretch of 4096 would make it: the table and
		 * the scale of cos and sin from the host */
		DIE_IF(tf_rope_yarn(&t, 1e7, 64, 4, 4096, 32, 1, -1, 1));
		test_rope(&t, "yarn");
		tf_rope_free(&t);
	}
	test_rope_refused();
	test_attention();
	test_attention_prompt();
	test_conv();
	test_gdn(2, 4, 32, 32, 5);
	test_gdn(2, 4, 64, 64, 3);
	test_gdn(16, 32, 128, 128, 17);
	test_gdn(16, 48, 128, 128, 1);
	diag("the chunked kernel takes 64 columns a block where Hv * Dv / 32 > %d multiprocessors", tf_cuda_device()->sms);
	static const int lens[] = { 17, 64, 65, 130, 300 };
	for (unsigned i = 0; i < sizeof lens / sizeof *lens; i++) {
		test_gdn_chunk(2, 4, 32, 32, lens[i]);          /* tiny-q35 */
		test_gdn_chunk(2, 4, 64, 64, lens[i]);          /* shakespeare-q35 */
		test_gdn_chunk(16, 16, 128, 128, lens[i]);      /* value/key heads 1 (0.8B) */
		test_gdn_chunk(16, 32, 128, 128, lens[i]);      /* 2 (9B) */
		test_gdn_chunk(16, 48, 128, 128, lens[i]);      /* 3 (27B) */
	}
	test_attn_prep(256, 64, 0);
	test_attn_prep(128, 64, 0);
	test_attn_prep(64, 64, 0);
	test_attn_prep(96, 32, 0);
	test_attn_prep(256, 64, 1);
	test_attn_prep(96, 32, 1);
	test_gdn_in(2, 4, 32, 32, 5, 4);
	test_gdn_in(2, 4, 64, 64, 3, 2);
	test_gdn_in(16, 32, 128, 128, 16, 4);
	test_gdn_win(2, 4, 32, 32, 5, 4);               /* tiny-q35 */
	test_gdn_win(2, 4, 64, 64, 3, 2);               /* shakespeare-q35, two taps */
	test_gdn_win(16, 32, 128, 128, 16, 4);          /* 9B */
	test_gdn_win(16, 48, 128, 128, 1, 4);           /* 27B, one token */
	test_gdn_win(4, 12, 128, 64, 7, 3);             /* three taps, 64-column value heads */
	test_act();
	test_draws();
	test_embed_gemm();
	return done();
}
#endif
