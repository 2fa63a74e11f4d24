/*
 * sample_top.cu: tf_sample's draw with top-k or top-p on the device, the
 * same id from the same logits and uniform (sample.cu has the greedy and
 * plain temperature draws).
 *
 * With top-k or top-p, tf_sample sorts the probabilities p = expf((logit -
 * max) / temp) in decreasing order (equal ones by id), keeps the first k,
 * sums them in that order, keeps the fewest whose running sum reaches top_p
 * times that sum, and walks those until the running sum exceeds u times
 * theirs. Each step asks where in the sorted order a running count or sum
 * first reaches a target; a radix descent over the bits of p answers that
 * without the order:
 *
 *   - a key is p's float bits, which order as p does; p <= 1 leaves 30
 *     bits, taken as digits of 11, 11 and 8 bits (bins of 2048, 2048, 256);
 *   - prob_rows writes the keys and bins them by the first digit (count and
 *     sum of p a bin) with PB blocks a row; pick_rows, a block a row, walks
 *     a level's bins from the largest, finds the bin the target falls in and
 *     bins that bin's keys by the next digit, until the bin holds one key or
 *     one element;
 *   - a bin of one key is a run of equal probabilities, which the host
 *     orders by id: the n-th of them is found by counting in id order.
 *
 * Sums are exact: each p is taken in units of 2^-76 (what a p below 2^-53
 * has beyond that is dropped: V 2^-76 < 2^-58 in all) and added as two
 * 64-bit limbs, so they do not depend on the order atomics land in. The
 * host adds in double, rounding at each step; the two choose differently
 * only where u times the sum, or top_p times it, falls within that rounding
 * (2^-53 relative a step) of a running sum.
 */
#include "common.cuh"
#include "expf_libm.cuh"
#include "sample_top.cuh"

#define ST 1024          /* threads a block */

#define PB 64            /* blocks a row for the maximum and the keys */
#define NB 2048          /* bins of a digit */
#define UNROLL 4         /* 16-byte loads of keys a thread has in flight */

typedef unsigned long long u64;
typedef unsigned __int128 u128;

/* a row's first-digit bins: prob_rows fills them, pick_rows empties them
 * again for the next draw */
typedef struct {
	u64 hi[NB], lo[NB];     /* sum of p 2^76 over the bin: its bits from 32 up, its low 32 bits */
	unsigned cnt[NB];       /* elements in the bin */
	unsigned mx;            /* the row's largest logit as an ordered key */
} top_bins;

/* float bits as an unsigned number in the floats' order, and back */
static __device__ __forceinline__ unsigned okey(float f)
{
	unsigned b = __float_as_uint(f);
	return b & 0x80000000u ? ~b : b | 0x80000000u;
}

static __device__ __forceinline__ float ofloat(unsigned k)
{
	return __uint_as_float(k & 0x80000000u ? k & 0x7fffffffu : ~k);
}

/* floor(p 2^76) of the p a key holds (p <= 1: at most 2^76) */
static __device__ __forceinline__ u128 mass(unsigned key)
{
	const int e = key >> 23, s = (e ? e : 1) - 150 + 76;
	const unsigned m = (key & 0x7fffffu) | (e ? 0x800000u : 0);

	return s >= 0 ? (u128)m << s : s > -24 ? (u128)(m >> -s) : 0;
}

static __device__ __forceinline__ u128 limbs(u64 hi, u64 lo)
{
	return ((u128)hi << 32) + lo;
}

/* one key into bin b: the limbs' sums fit 64 bits for up to 2^20 keys */
static __device__ __forceinline__ void bin_add(unsigned *cnt, u64 *hi, u64 *lo, int b, unsigned key)
{
	const u128 w = mass(key);

	atomicAdd(&cnt[b], 1u);
	if (w) {
		atomicAdd(&hi[b], (u64)(w >> 32));
		atomicAdd(&lo[b], (u64)w & 0xffffffffu);
	}
}

/* each row's largest logit (NaN ignored, as tf_argmax) */
__global__ void __launch_bounds__(ST) max_rows(const float *__restrict__ logits, int V, top_bins *bins)
{
	pdl_wait();
	pdl_trigger();
	__shared__ float sh[32];
	const int row = blockIdx.x / PB, part = blockIdx.x % PB, per = (V + PB - 1) / PB;
	const int lo = part * per, hi = min(lo + per, V);
	const float *l = logits + (int64_t)row * V;
	float mx = -INFINITY;

	for (int i = lo + threadIdx.x; i < hi; i += ST)
		mx = fmaxf(mx, l[i]);
	mx = block_max(mx, sh);
	if (threadIdx.x == 0 && lo < hi)
		atomicMax(&bins[row].mx, okey(mx));
}

/* the keys of each row, and their first-digit bins */
__global__ void __launch_bounds__(ST) prob_rows(const float *__restrict__ logits, int V,
						const tf_draw_args *__restrict__ a, top_bins *bins,
						unsigned *keys, int64_t ks)
{
	__shared__ unsigned cnt[NB];
	__shared__ u64 hi[NB], lo[NB];
	const int row = blockIdx.x / PB, part = blockIdx.x % PB, per = (V + PB - 1) / PB;
	const int i0 = part * per, i1 = min(i0 + per, V);
	const float *l = logits + (int64_t)row * V;
	unsigned *k = keys + row * ks;
	top_bins *g = bins + row;

	for (int b = threadIdx.x; b < NB; b += ST) {
		cnt[b] = 0;
		hi[b] = lo[b] = 0;
	}
	pdl_wait();
	pdl_trigger();
	__syncthreads();
	const float mx = ofloat(g->mx), temp = a[row].temp;
	for (int i = i0 + threadIdx.x; i < i1; i += ST) {
		/* tf_sample's p: a float difference, a float quotient, libm's expf */
		float p = libm_expf((l[i] - mx) / temp);
		unsigned key = p <= 1.0f ? __float_as_uint(p) : 0;     /* NaN: never drawn */
		k[i] = key;
		bin_add(cnt, hi, lo, key >> 19, key);
	}
	__syncthreads();
	for (int b = threadIdx.x; b < NB; b += ST)
		if (cnt[b]) {
			atomicAdd(&g->cnt[b], cnt[b]);
			atomicAdd(&g->hi[b], hi[b]);
			atomicAdd(&g->lo[b], lo[b]);
		}
}

typedef struct {
	u64 c, h, l;            /* count, sum's high and low limbs */
} tri;

static __device__ __forceinline__ tri tri_add(tri a, tri b)
{
	return { a.c + b.c, a.h + b.h, a.l + b.l };
}

/* where a descent stopped: a bin, what comes before it in the host's order,
 * and which of its elements the target is */
typedef struct {
	u128 mass;              /* sum before the bin, units of 2^-76 */
	u128 m;                 /* the bin's sum */
	u64 cnt;                /* elements before the bin */
	u64 c;                  /* elements in it; 0: the target is past the row */
	unsigned pre;           /* the bin: key >> sh */
	int sh;
	u64 j;                  /* the target is the bin's j-th element (from 1) */
} spot;

typedef struct {
	u64 hi[NB], lo[NB];     /* a deeper level's bins, as top_bins */
	unsigned cnt[NB];
	tri ws[32];
	spot sp;
	int hit, id;
	unsigned wc[32];
} pick_smem;

/* sums of v over the threads before this one; *tot over the block */
static __device__ tri scan3(tri v, tri *ws, tri *tot)
{
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	tri x = v;

	for (int o = 1; o < 32; o <<= 1) {
		tri y = { __shfl_up_sync(~0u, x.c, o), __shfl_up_sync(~0u, x.h, o), __shfl_up_sync(~0u, x.l, o) };
		if (lane >= o)
			x = tri_add(x, y);
	}
	if (lane == 31)
		ws[w] = x;
	__syncthreads();
	if (w == 0) {
		tri t = ws[lane];
		for (int o = 1; o < 32; o <<= 1) {
			tri y = { __shfl_up_sync(~0u, t.c, o), __shfl_up_sync(~0u, t.h, o), __shfl_up_sync(~0u, t.l, o) };
			if (lane >= o)
				t = tri_add(t, y);
		}
		ws[lane] = t;
	}
	__syncthreads();
	tri base = w ? ws[w - 1] : tri{ 0, 0, 0 };
	*tot = ws[31];
	__syncthreads();        /* ws is free again */
	return { base.c + x.c - v.c, base.h + x.h - v.h, base.l + x.l - v.l };
}

/* bins the keys (ids < V) whose bits from psh up are pre by their bits from
 * sh up, masked */
static __device__ void bin_keys(const unsigned *keys, int V, unsigned pre, int psh, int sh, unsigned mask,
				pick_smem *s)
{
	const uint4 *k4 = (const uint4 *)keys;
	const int nv = (V + 3) / 4;

	for (int b = threadIdx.x; b < NB; b += ST) {
		s->cnt[b] = 0;
		s->hi[b] = s->lo[b] = 0;
	}
	__syncthreads();
	for (int v = threadIdx.x; v < nv; v += ST * UNROLL) {
		uint4 q[UNROLL];
#pragma unroll
		for (int u = 0; u < UNROLL; u++)
			q[u] = v + u * ST < nv ? k4[v + u * ST] : make_uint4(0, 0, 0, 0);
#pragma unroll
		for (int u = 0; u < UNROLL; u++) {
			const unsigned kk[4] = { q[u].x, q[u].y, q[u].z, q[u].w };
			for (int e = 0; e < 4; e++)
				if (4 * (v + u * ST) + e < V && (kk[e] >> psh) == pre)
					bin_add(s->cnt, s->hi, s->lo, (kk[e] >> sh) & mask, kk[e]);
		}
	}
	__syncthreads();
}

enum { COUNT, REACH, PASS };    /* the running count reaches t; the running sum reaches t; exceeds it */

static __device__ __forceinline__ bool falls(int goal, u128 t, u64 cnt, u128 mass, u64 c, u128 m)
{
	if (goal == COUNT)
		return cnt < t && t <= cnt + c;
	if (goal == REACH)
		return mass < t && t <= mass + m;
	return mass <= t && t < mass + m;
}

/* in a bin of one key, which element's running sum first reaches (exceeds) t */
static __device__ u64 within(int goal, u128 t, const spot &sp)
{
	const u128 w = mass(sp.pre);
	u64 a = 1, b = sp.c;

	while (a < b) {
		u64 j = (a + b) / 2;
		u128 run = sp.mass + j * w;
		if (goal == REACH ? run >= t : run > t)
			b = j;
		else
			a = j + 1;
	}
	return a;
}

/* the running sum up to and with the element a descent stopped at */
static __device__ u128 reached(const spot &sp)
{
	return sp.mass + (sp.j == sp.c ? sp.m : sp.j * mass(sp.pre));
}

/* where the running count or sum, in the host's order, first reaches (or
 * exceeds) t; every thread gets the same spot */
static __device__ spot descend(const top_bins *g, const unsigned *keys, int V, int goal, u128 t, pick_smem *s)
{
	unsigned pre = 0;
	u64 cnt0 = 0;
	u128 mass0 = 0;

	for (int lv = 0;; lv++) {
		const int sh = lv == 0 ? 19 : lv == 1 ? 8 : 0, nb = lv == 2 ? 256 : NB;
		const unsigned *cn = lv ? s->cnt : g->cnt;
		const u64 *hi = lv ? s->hi : g->hi, *lo = lv ? s->lo : g->lo;

		if (lv)
			bin_keys(keys, V, pre, lv == 1 ? 19 : 8, sh, nb - 1, s);
		/* thread i holds bins nb-1-2i and nb-2-2i: thread order is the host's */
		const int b = nb - 1 - 2 * threadIdx.x;
		tri v0 = { 0, 0, 0 }, v1 = { 0, 0, 0 }, tot;
		if (b > 0) {
			v0 = { cn[b], hi[b], lo[b] };
			v1 = { cn[b - 1], hi[b - 1], lo[b - 1] };
		}
		if (threadIdx.x == 0)
			s->hit = 0;
		tri e = scan3(tri_add(v0, v1), s->ws, &tot);
		for (int q = 0; q < 2 && b > 0; q++) {
			tri v = q ? v1 : v0;
			u128 before = mass0 + limbs(e.h, e.l), m = limbs(v.h, v.l);
			if (falls(goal, t, cnt0 + e.c, before, v.c, m)) {
				s->sp = { before, m, cnt0 + e.c, v.c, (pre << (lv == 2 ? 8 : 11)) | (b - q), sh, 0 };
				s->hit = 1;
			}
			e = tri_add(e, v0);
		}
		__syncthreads();
		spot sp = s->sp;
		const int hit = s->hit;
		__syncthreads();
		if (!hit) {
			sp.c = 0;
			return sp;
		}
		sp.j = goal == COUNT ? (u64)(t - sp.cnt) : sp.c == 1 ? 1 : sp.sh == 0 ? within(goal, t, sp) : 0;
		if (sp.sh == 0 || sp.j == sp.c)
			return sp;
		pre = sp.pre;
		cnt0 = sp.cnt;
		mass0 = sp.mass;
	}
}

/* the row's whole sum */
static __device__ u128 row_sum(const top_bins *g, pick_smem *s)
{
	tri v = { 0, 0, 0 }, tot;

	for (int b = threadIdx.x; b < NB; b += ST)
		v = tri_add(v, { g->cnt[b], g->hi[b], g->lo[b] });
	scan3(v, s->ws, &tot);
	return limbs(tot.h, tot.l);
}

/* of the 4 keys of vector v (ids 4v ..), how many are ids < V with key >> sh == pre */
static __device__ __forceinline__ int matches(uint4 q, int v, int V, unsigned pre, int sh)
{
	const unsigned kk[4] = { q.x, q.y, q.z, q.w };
	int n = 0;

	for (int e = 0; e < 4; e++)
		n += 4 * v + e < V && (kk[e] >> sh) == pre;
	return n;
}

/* the id of the n-th (from 0), in id order, of the keys with key >> sh ==
 * pre: the block counts them in 32 equal ranges, keeps the range the n-th
 * is in, and so on until one warp's 32 vectors are left */
static __device__ int nth_id(const unsigned *keys, int V, unsigned pre, int sh, u64 n, pick_smem *s)
{
	const uint4 *k4 = (const uint4 *)keys;
	const int lane = threadIdx.x & 31, w = threadIdx.x >> 5;
	int lo = 0, hi = (V + 3) / 4;

	while (hi - lo > 32) {
		const int len = (hi - lo + 31) / 32, a = lo + w * len, b = min(a + len, hi);
		int c = 0;
#pragma unroll 8
		for (int v = a + lane; v < b; v += 32)
			c += matches(k4[v], v, V, pre, sh);
		for (int o = 16; o > 0; o >>= 1)
			c += __shfl_xor_sync(~0u, c, o);
		if (lane == 0)
			s->wc[w] = c;
		__syncthreads();
		int k = 0;
		while (k < 31 && n >= s->wc[k])
			n -= s->wc[k++];
		__syncthreads();
		lo += k * len;
		hi = min(lo + len, hi);
	}
	if (w == 0) {
		const int v = lo + lane;
		const uint4 q = v < hi ? k4[v] : make_uint4(0, 0, 0, 0);
		const int c = v < hi ? matches(q, v, V, pre, sh) : 0;
		int x = c;
		for (int o = 1; o < 32; o <<= 1) {
			int y = __shfl_up_sync(~0u, x, o);
			if (lane >= o)
				x += y;
		}
		if ((u64)(x - c) <= n && n < (u64)x) {
			const unsigned kk[4] = { q.x, q.y, q.z, q.w };
			int left = (int)(n - (x - c));
			for (int e = 0; e < 4; e++)
				if (4 * v + e < V && (kk[e] >> sh) == pre && left-- == 0)
					s->id = 4 * v + e;
		}
	}
	__syncthreads();
	return s->id;
}

/* x 2^-76 as a double, rounded to nearest */
static __device__ double to_double(u128 x)
{
	const u64 h = (u64)(x >> 64);

	if (!h)
		return ldexp((double)(u64)x, -76);
	/* the top 64 bits and a sticky bit for the rest: one rounding */
	const int s = 64 - __clzll(h);
	const u64 y = (u64)(x >> s) | ((x & (((u128)1 << s) - 1)) != 0);
	return ldexp((double)y, s - 76);
}

/* t 2^76, rounded down or (up) up; 0 <= t < 2^51 */
static __device__ u128 fixed(double t, int up)
{
	int e;

	if (!(t > 0))
		return 0;
	const u64 m = (u64)ldexp(frexp(t, &e), 53);     /* t = m 2^(e-53) */
	const int s = e - 53 + 76;
	if (s >= 0)
		return (u128)m << s;
	if (s <= -64)
		return up;
	return (m >> -s) + (up && (m & ((1ull << -s) - 1)));
}

/* a block a row: tf_sample's cuts and draw by descents, the id by counting */
__global__ void __launch_bounds__(ST) pick_rows(int V, const tf_draw_args *__restrict__ a, top_bins *bins,
						const unsigned *__restrict__ keys, int64_t ks, int32_t *out, tf_draw_next nx)
{
	__shared__ pick_smem s;
	pdl_wait();
	pdl_trigger();
	const int row = blockIdx.x;
	top_bins *g = bins + row;
	const unsigned *k = keys + row * ks;
	const tf_draw_args d = a[row];
	spot sp;
	u128 sum;

	if (threadIdx.x == 0)
		s.id = 0;
	/* top-k: the sum of the first k */
	if (d.top_k > 0 && d.top_k < V) {
		sp = descend(g, k, V, COUNT, d.top_k, &s);
		sum = reached(sp);
	} else {
		sum = row_sum(g, &s);
	}
	/* top-p: the fewest whose running sum reaches top_p times that
	 * (keep >= top_p * sum: at top_p 0 the first one) */
	if (d.top_p < 1) {
		u128 t = fixed(__dmul_rn((double)d.top_p, to_double(sum)), 1);
		if (t <= sum) {
			sp = descend(g, k, V, REACH, t > 0 ? t : 1, &s);
			sum = reached(sp);
		}
	}
	/* the first of those whose running sum exceeds u times theirs */
	u128 r = fixed(__dmul_rn(d.u, to_double(sum)), 0);
	sp = descend(g, k, V, PASS, r < sum ? r : sum - 1, &s);
	int id = sp.c ? nth_id(k, V, sp.pre, sp.sh, sp.j - 1, &s) : 0;

	for (int b = threadIdx.x; b < NB; b += ST) {
		g->cnt[b] = 0;
		g->hi[b] = g->lo[b] = 0;
	}
	if (threadIdx.x == 0) {
		g->mx = 0;
		if (out)
			out[row] = id;
		put_next(nx, row, gridDim.x, id);
	}
}

/* ---- entries ---- */

static unsigned *top_keys;      /* (rows, V rounded up to 4): the 16-byte loads stay aligned */
static top_bins *top_b;         /* (rows) */
static int top_rows;
static int64_t key_cap;

int tf_cuda_top_reserve(int n, int V)
{
	int64_t need = (int64_t)n * ((V + 3) / 4 * 4);

	if (n <= top_rows && need <= key_cap)
		return 0;
	n = n > top_rows ? n : top_rows;
	need = need > key_cap ? need : key_cap;
	/* kept: a captured step points at it */
	top_rows = 0;
	key_cap = 0;
	/* pick_rows leaves the bins empty after a draw; they start so */
	if (tf_cuda_regrow((void **)&top_keys, sizeof(unsigned) * need, "the draws") < 0 ||
	    tf_cuda_regrow((void **)&top_b, sizeof(top_bins) * n, "the draws") < 0 ||
	    tf_cuda_zero(top_b, sizeof(top_bins) * n) < 0)
		return -1;
	top_rows = n;
	key_cap = need;
	return 0;
}

int tf_cuda_sample_top(const float *logits, int n, int V, const tf_draw_args *a, int32_t *out,
		       const tf_draw_next *next)
{
	const int64_t ks = (V + 3) / 4 * 4;

	if (n <= 0)
		return 0;
	if (n > top_rows || n * ks > key_cap)
		return tf_err("top-k/top-p draw of %d rows of %d without tf_cuda_draw_reserve", n, V);
	LAUNCH(max_rows, n * PB, ST, logits, V, top_b);
	LAUNCH(prob_rows, n * PB, ST, logits, V, a, top_b, top_keys, ks);
	LAUNCH(pick_rows, n, ST, V, a, top_b, top_keys, ks, out, next_or_none(next));
	LAUNCH_CHECK();
	return 0;
}
