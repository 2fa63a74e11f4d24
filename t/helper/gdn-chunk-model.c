/*
 * gdn-chunk-model: kernels/gdn_chunk.cu's steps in plain C, with each
 * tensor-core operand rounded as the kernel rounds it, against a float64
 * recurrence; the figures behind the kernel's choice of precision and
 * t/unit/cuda-ops.c's tolerance.
 *
 *   t/helper/gdn-chunk-model
 *
 * For realistic inputs (q and k L2-normed, beta in (0, 1), exp(g) in
 * (0, 1), a nonzero state) and, last, keys of a chunk nearly parallel with
 * slow decay, it prints max |error| / max |value| of the outputs o and the
 * final state S for the CPU forms (lib/cpu/delta_rule.c, f32) and the model with
 * operands f32, split bf16 (hi + lo, three products: the kernel), bf16 and
 * tf32.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../gdnref.h"
#include "cpu/delta_rule.h"
#include "cpu/ops.h"
#include "model/weight.h"

#define CH 64

enum { F32, SPLIT, BF16, TF32, FORMS };
static const char *form_name[FORMS] = { "f32", "split", "bf16", "tf32" };
static int form;

static float bf16(float x)
{
	return tf_bf16_to_f32(tf_f32_to_bf16(x));
}

static float tf32(float x)      /* 10 mantissa bits, to nearest even */
{
	uint32_t u;

	memcpy(&u, &x, 4);
	u = (u + 0xfff + ((u >> 13) & 1)) & ~0x1fffu;
	memcpy(&x, &u, 4);
	return x;
}

/* an operand as the tensor cores see it: hi and lo parts */
static void operand(float x, float *hi, float *lo)
{
	*lo = 0;
	switch (form) {
	case F32: *hi = x; break;
	case SPLIT: *hi = bf16(x); *lo = bf16(x - *hi); break;
	case BF16: *hi = bf16(x); break;
	default: *hi = tf32(x); break;
	}
}

/* sum over k < K of a[k * as] b[k * bs]: hi*hi + (hi*lo + lo*hi), in f32 */
static float dot(const float *a, int64_t as, const float *b, int64_t bs, int K)
{
	float s = 0;

	for (int k = 0; k < K; k++) {
		float ah, al, bh, bl;
		operand(a[k * as], &ah, &al);
		operand(b[k * bs], &bh, &bl);
		s += ah * bh + (ah * bl + al * bh);
	}
	return s;
}

/* the kernel's steps for one value head h, chunk by chunk (gdn_chunk.cu) */
static void model(const tf_config *c, const float *qkv, const float *beta, const float *g, int h, float *S, int64_t n,
		  float *o)
{
	int Dk = c->lin_k_dim, Dv = c->lin_v_dim, Hv = c->lin_v_heads, r = Hv / c->lin_k_heads;
	int64_t kd = (int64_t)c->lin_k_heads * Dk, C = 2 * kd + (int64_t)Hv * Dv;
	static float A[CH][CH], T[CH][CH], Tb[CH][CH], P[CH][CH], X[16][16];
	float gam[CH], bt[CH];
	float *K = malloc(4 * CH * Dk), *Q = malloc(4 * CH * Dk), *V = malloc(4 * CH * Dv), *W = malloc(4 * CH * Dk);
	float *Vn = malloc(4 * CH * Dv), *QS = malloc(4 * CH * Dv), *Vd = malloc(4 * CH * Dv);

	for (int64_t t0 = 0; t0 < n; t0 += CH) {
		// the chunk, zeros past the end; gam summed in token order
		float acc = 0;
		for (int i = 0; i < CH; i++) {
			int in = t0 + i < n;
			const float *q = qkv + (t0 + i) * C + (h / r) * Dk;
			for (int d = 0; d < Dk; d++) {
				Q[i * Dk + d] = in ? q[d] : 0;
				K[i * Dk + d] = in ? q[kd + d] : 0;
			}
			for (int j = 0; j < Dv; j++)
				V[i * Dv + j] = in ? qkv[(t0 + i) * C + 2 * kd + h * Dv + j] : 0;
			bt[i] = in ? beta[(t0 + i) * Hv + h] : 0;
			gam[i] = acc += in ? g[(t0 + i) * Hv + h] : 0;
		}
		float gl = gam[CH - 1];
		// A = strict_lower(diag(beta) K K^T . Dec), P = lower(Q K^T . Dec)
		for (int i = 0; i < CH; i++)
			for (int j = 0; j < CH; j++) {
				float dec = i >= j ? expf(gam[i] - gam[j]) : 0;
				A[i][j] = i > j ? bt[i] * dot(K + i * Dk, 1, K + j * Dk, 1, Dk) * dec : 0;
				P[i][j] = i >= j ? dot(Q + i * Dk, 1, K + j * Dk, 1, Dk) * dec : 0;
			}
		// T = (I + A)^-1: diagonal 16 x 16 blocks by substitution, then the
		// blocks below by distance, T_rc = -T_rr sum_{c <= k < r} A_rk T_kc
		memset(T, 0, sizeof T);
		for (int b = 0; b < CH; b += 16)
			for (int j = 0; j < 16; j++) {
				float x[16] = { 0 };
				x[j] = 1;
				for (int k = 0; k < 15; k++)
					for (int i = k + 1; i < 16; i++)
						x[i] -= A[b + i][b + k] * x[k];
				for (int i = 0; i < 16; i++)
					T[b + i][b + j] = x[i];
			}
		for (int dist = 16; dist < CH; dist += 16)
			for (int rb = dist; rb < CH; rb += 16) {
				int cb = rb - dist;
				for (int i = 0; i < 16; i++)
					for (int j = 0; j < 16; j++) {
						float s = 0;
						for (int k = cb; k < rb; k++)
							s += A[rb + i][k] * T[k][cb + j];
						X[i][j] = s;
					}
				for (int i = 0; i < 16; i++)
					for (int j = 0; j < 16; j++) {
						float s = 0;
						for (int k = 0; k < 16; k++)
							s += T[rb + i][rb + k] * X[k][j];
						T[rb + i][cb + j] = -s;
					}
			}
		for (int i = 0; i < CH; i++)
			for (int j = 0; j < CH; j++)
				Tb[i][j] = T[i][j] * (bt[j] * expf(gam[j]));
		// -W = -T diag(beta exp(gam)) K; Vn = U - W S with U = T diag(beta) V; Q S
		for (int i = 0; i < CH; i++) {
			for (int d = 0; d < Dk; d++)
				W[i * Dk + d] = -dot(Tb[i], 1, K + d, Dk, CH);
			for (int j = 0; j < Dv; j++) {
				float u = 0;
				for (int k = 0; k < CH; k++) {
					float ah, al, bh, bl;
					operand(T[i][k], &ah, &al);
					operand(bt[k] * V[k * Dv + j], &bh, &bl);
					u += ah * bh + (ah * bl + al * bh);
				}
				Vn[i * Dv + j] = u + dot(W + i * Dk, 1, S + j, Dv, Dk);
				QS[i * Dv + j] = dot(Q + i * Dk, 1, S + j, Dv, Dk);
				Vd[i * Dv + j] = expf(gl - gam[i]) * Vn[i * Dv + j];
			}
		}
		// O = diag(exp(gam)) Q S + P Vn
		for (int i = 0; i < CH && t0 + i < n; i++)
			for (int j = 0; j < Dv; j++)
				o[((t0 + i) * Hv + h) * Dv + j] = expf(gam[i]) * QS[i * Dv + j] + dot(P[i], 1, Vn + j, Dv, CH);
		// S = exp(gam_last) S + K^T diag(exp(gam_last - gam)) Vn
		for (int d = 0; d < Dk; d++)
			for (int j = 0; j < Dv; j++)
				S[d * Dv + j] = expf(gl) * S[d * Dv + j] + dot(K + d, Dk, Vd + j, Dv, CH);
	}
	free(K); free(Q); free(V); free(W); free(Vn); free(QS); free(Vd);
}

/* parallel: keys of a chunk near one common direction, beta near 1, slow decay */
static void run(int Hk, int Hv, int D, int64_t n, int parallel)
{
	tf_config c = { .lin_k_heads = Hk, .lin_v_heads = Hv, .lin_k_dim = D, .lin_v_dim = D };
	int64_t C = 2LL * Hk * D + (int64_t)Hv * D, sn = (int64_t)Hv * D * D, on = n * Hv * D;
	float *qkv = malloc(4 * n * C), *beta = malloc(4 * n * Hv), *g = malloc(4 * n * Hv);
	float *S0 = malloc(4 * sn), *S = malloc(4 * sn), *o = malloc(4 * on);
	double *Sd = malloc(8 * sn), *od = malloc(8 * on);

	ref_inputs(Hk, Hv, D, D, n, parallel, qkv, beta, g);
	for (int64_t i = 0; i < sn; i++)
		Sd[i] = S0[i] = 0.1f * ref_gauss();
	delta_rule64_f(c.lin_k_heads, c.lin_v_heads, c.lin_k_dim, c.lin_v_dim, n, qkv, beta, g, c.lin_v_heads, Sd, od);

	printf("Hk %2d Hv %2d D %3d n %4lld%s", Hk, Hv, D, (long long)n, parallel ? " parallel keys" : "");
	for (int chunked = 0; chunked < 2; chunked++) {
		memcpy(S, S0, 4 * sn);
		tf_gdn_rule(&c, qkv, beta, g, S, n, o, chunked);
		printf("  %s o %.1e S %.1e", chunked ? "cpu-chunked" : "cpu-step", rel_err64(o, od, on), rel_err64(S, Sd, sn));
	}
	printf("\n  model:");
	for (form = 0; form < FORMS; form++) {
		memcpy(S, S0, 4 * sn);
		for (int h = 0; h < Hv; h++)
			model(&c, qkv, beta, g, h, S + (int64_t)h * D * D, n, o);
		printf("  %s o %.1e S %.1e", form_name[form], rel_err64(o, od, on), rel_err64(S, Sd, sn));
	}
	printf("\n");
	fflush(stdout);
	free(qkv); free(beta); free(g); free(S0); free(S); free(o); free(Sd); free(od);
}

int main(void)
{
	static const int64_t lens[] = { 17, 64, 65, 130, 300 };

	printf("max |error| / max |value| against a float64 recurrence\n");
	for (unsigned l = 0; l < sizeof lens / sizeof *lens; l++) {
		run(2, 4, 32, lens[l], 0);
		run(2, 4, 64, lens[l], 0);
		run(1, 1, 128, lens[l], 0);
		run(1, 2, 128, lens[l], 0);
		run(1, 3, 128, lens[l], 0);
	}
	run(1, 2, 128, 1024, 0);
	run(1, 2, 128, 300, 1);
	return 0;
}
