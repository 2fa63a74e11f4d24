/*
 * gdn-chunk-emu: kernels/gdn_chunk.cu run on the CPU, for a machine without
 * a GPU (t/helper/gdn-chunk-emu.sh builds and runs it). The kernel's own
 * source is compiled as host C++: each of a block's 256 threads runs on its
 * own stack (ucontext), __syncthreads waits for the whole block, and
 * mma.sync gathers the 32 lanes of a warp and multiplies their fragments as
 * the PTX ISA lays them out ("Matrix Fragments for mma.m16n8k16", .bf16),
 * summing in f32. Shared memory and the outputs start as NaN, so a read of
 * anything not written shows; threads run to their next barrier or mma in
 * thread order, reversed, or shuffled, and the results must not change,
 * which a missing barrier breaks.
 *
 * Checks, for the shapes the kernel takes (Dk 32, 64, 128; 32- and
 * 64-column blocks), 1 to 130 tokens, value/key head ratios 1 to 3: outputs
 * and final state against a float64 recurrence with the bounds of
 * t/unit/cuda-ops.c (max error 1e-4 of the largest value, NMSE 1e-9), and
 * the same bits under
 * every schedule.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>

#include <algorithm>
#include <random>
#include <vector>

// what the kernel takes from CUDA and common.cuh
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define WARP 32

struct dim { unsigned x; };
static dim threadIdx, blockIdx;
struct float2 { float x, y; };
struct float4 { float x, y, z, w; };
struct uint4 { unsigned x, y, z, w; };
static float2 make_float2(float a, float b) { return { a, b }; }
static float4 make_float4(float a, float b, float c, float d) { return { a, b, c, d }; }
static void pdl_wait(void) {}
static void pdl_trigger(void) {}

/* round to nearest even, as __float2bfloat16_rn */
static uint16_t f2bf(float f)
{
	uint32_t u;

	memcpy(&u, &f, 4);
	if ((u & 0x7fffffff) > 0x7f800000)
		return 0x7fc0;
	return (uint16_t)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
}

static float bf2f(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, 4);
	return f;
}

// the block: 256 threads on their own stacks, switched at barriers and mma
enum { RUN, BARRIER, MMA, DONE };
#define THREADS 256

struct thread {
	ucontext_t uc;
	std::vector<char> stack;
	int state;
	float *c;               /* an mma's accumulators and fragments */
	uint32_t a[4], b[2];
};

static thread th[THREADS];
static ucontext_t sched;
static int cur, order_kind;
static std::mt19937 rng(7);
static uint4 *emu_smem;

static void yield(int state)
{
	th[cur].state = state;
	swapcontext(&th[cur].uc, &sched);
}

static void __syncthreads(void)
{
	yield(BARRIER);
}

static void mma_bf16(float *c, uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3, uint32_t b0, uint32_t b1)
{
	thread &t = th[cur];

	t.c = c;
	t.a[0] = a0; t.a[1] = a1; t.a[2] = a2; t.a[3] = a3;
	t.b[0] = b0; t.b[1] = b1;
	yield(MMA);
}

/* warp w's 32 lanes are all at an mma: C (16x8) += A (16x16) B (16x8) */
static void warp_mma(int w)
{
	float A[16][16], B[16][8], C[16][8];

	for (int l = 0; l < 32; l++) {
		const thread &t = th[w * 32 + l];
		const int g = l >> 2, k = 2 * (l & 3);
		const int ar[4] = { g, g + 8, g, g + 8 }, ak[4] = { k, k, k + 8, k + 8 };
		for (int r = 0; r < 4; r++) {
			A[ar[r]][ak[r]] = bf2f(t.a[r] & 0xffff);
			A[ar[r]][ak[r] + 1] = bf2f(t.a[r] >> 16);
		}
		for (int r = 0; r < 2; r++) {
			B[k + 8 * r][g] = bf2f(t.b[r] & 0xffff);
			B[k + 8 * r + 1][g] = bf2f(t.b[r] >> 16);
		}
		C[g][k] = t.c[0]; C[g][k + 1] = t.c[1]; C[g + 8][k] = t.c[2]; C[g + 8][k + 1] = t.c[3];
	}
	for (int r = 0; r < 16; r++)
		for (int c = 0; c < 8; c++)
			for (int k = 0; k < 16; k++)
				C[r][c] += A[r][k] * B[k][c];
	for (int l = 0; l < 32; l++) {
		thread &t = th[w * 32 + l];
		const int g = l >> 2, k = 2 * (l & 3);
		t.c[0] = C[g][k]; t.c[1] = C[g][k + 1]; t.c[2] = C[g + 8][k]; t.c[3] = C[g + 8][k + 1];
		t.state = RUN;
	}
}

static void (*body)(void);

static void start(void)
{
	body();
	yield(DONE);
}

/* runs body as block b; -1 when a warp diverges at an mma or the block deadlocks */
static int run_block(void (*fn)(void), unsigned b)
{
	std::vector<int> order(THREADS);

	body = fn;
	blockIdx.x = b;
	for (int i = 0; i < THREADS; i++) {
		th[i].stack.resize(1 << 16);
		getcontext(&th[i].uc);
		th[i].uc.uc_stack.ss_sp = th[i].stack.data();
		th[i].uc.uc_stack.ss_size = th[i].stack.size();
		th[i].uc.uc_link = NULL;
		makecontext(&th[i].uc, start, 0);
		th[i].state = RUN;
	}
	for (;;) {
		int ran = 0, at_bar = 0, done = 0;
		for (int i = 0; i < THREADS; i++)
			order[i] = order_kind == 1 ? THREADS - 1 - i : i;
		if (order_kind == 2)
			std::shuffle(order.begin(), order.end(), rng);
		for (int i : order)
			if (th[i].state == RUN) {
				cur = i;
				threadIdx.x = i;
				swapcontext(&sched, &th[i].uc);
				ran = 1;
			}
		for (int w = 0; w < THREADS / 32; w++) {
			int m = 0, off = 0;
			for (int l = 0; l < 32; l++) {
				m += th[w * 32 + l].state == MMA;
				off += th[w * 32 + l].state == BARRIER || th[w * 32 + l].state == DONE;
			}
			if (m == 32) {
				warp_mma(w);
				ran = 1;
			} else if (m && off) {
				fprintf(stderr, "block %u warp %d: %d lanes at an mma, the rest elsewhere\n", b, w, m);
				return -1;
			}
		}
		if (ran)
			continue;
		for (int i = 0; i < THREADS; i++) {
			at_bar += th[i].state == BARRIER;
			done += th[i].state == DONE;
		}
		if (done == THREADS)
			return 0;
		if (at_bar < THREADS) {
			fprintf(stderr, "block %u: %d threads at a barrier, %d done\n", b, at_bar, done);
			return -1;
		}
		for (int i = 0; i < THREADS; i++)
			th[i].state = RUN;
	}
}

#include "gdn_chunk_host.inc"

// the launch: every block of the grid, one after another
static struct {
	const float *qkv, *beta, *g;
	int64_t ld;
	float *S;
	int n, Hk, Hv, Dv;
	float *o;
} arg;

template <int DK, int DS>
static void kernel_body(void)
{
	gdn_chunk<DK, DS>(arg.qkv, arg.beta, arg.g, arg.ld, arg.S, arg.n, arg.Hk, arg.Hv, arg.Dv, arg.o);
}

template <int DK, int DS>
static int launch(void)
{
	std::vector<uint4> sm(lay<DK, DS>::BYTES / 16);

	for (int b = 0; b < arg.Hv * (arg.Dv / DS); b++) {
		memset(sm.data(), 0xff, sm.size() * 16);        /* NaN as f32 and as bf16 */
		emu_smem = sm.data();
		if (run_block(kernel_body<DK, DS>, b) < 0)
			return -1;
	}
	return 0;
}

static uint64_t st = 0x2545f4914f6cdd1dull;

static double unit(void)
{
	st ^= st << 13;
	st ^= st >> 7;
	st ^= st << 17;
	return (st >> 11) * (1.0 / 9007199254740992.0);
}

static float gauss(void)
{
	return (float)((unit() + unit() + unit() - 1.5) * 2.0);
}

static int fails, checks;

static void check(const char *what, const char *part, const std::vector<float> &got, const std::vector<double> &want)
{
	double md = 0, mw = 0, se = 0, sw = 0;

	for (size_t i = 0; i < got.size(); i++) {
		double d = got[i] - want[i];
		if (!(fabs(d) <= md))
			md = fabs(d);
		mw = std::max(mw, fabs(want[i]));
		se += d * d;
		sw += want[i] * want[i];
	}
	int good = md <= 1e-4 * mw && se <= 1e-9 * sw;
	printf("%sok %d - %s: %s within %.2g of the largest value, nmse %.2g\n", good ? "" : "not ", ++checks, what,
	       part, md / mw, se / sw);
	fails += !good;
}

static void run(int DK, int DS, int Hk, int Hv, int n)
{
	const int D = DK;
	const int64_t kd = (int64_t)Hk * D, C = 2 * kd + (int64_t)Hv * D, ld = Hv + 3, sn = (int64_t)Hv * D * D;
	const int64_t on = (int64_t)n * Hv * D;
	std::vector<float> qkv(n * C), beta(n * ld, NAN), g(n * ld, NAN), S0(sn), S, o, S1, o1;
	std::vector<double> Sd(sn), od(on);
	char what[96];

	// inputs as prep leaves them: q, k L2-normed, beta in (0, 1), exp(g) in (0, 1)
	for (auto &x : qkv)
		x = gauss();
	for (int t = 0; t < n; t++)
		for (int hh = 0; hh < 2 * Hk; hh++) {
			float *x = &qkv[t * C + hh * D], ss = 0;
			for (int i = 0; i < D; i++)
				ss += x[i] * x[i];
			for (int i = 0; i < D; i++)
				x[i] *= 1.0f / sqrtf(ss + 1e-6f) * (hh < Hk ? 1.0f / sqrtf((float)D) : 1.0f);
		}
	for (int h = 0; h < Hv; h++) {
		float rate = expf((float)(unit() * 6 - 5));
		for (int t = 0; t < n; t++) {
			beta[t * ld + h] = 1.0f / (1.0f + expf(-2 * gauss()));
			g[t * ld + h] = -rate * log1pf(expf(gauss()));
		}
	}
	for (int64_t i = 0; i < sn; i++)
		Sd[i] = S0[i] = 0.1f * gauss();
	for (int t = 0; t < n; t++)
		for (int h = 0; h < Hv; h++) {
			const float *q = &qkv[t * C + (h / (Hv / Hk)) * D], *k = q + kd, *v = &qkv[t * C + 2 * kd + h * D];
			double a = exp((double)g[t * ld + h]), b = beta[t * ld + h], *Sh = &Sd[(int64_t)h * D * D];
			for (int j = 0; j < D; j++) {
				double mv = 0, op = 0;
				for (int i = 0; i < D; i++)
					mv += (Sh[i * D + j] *= a) * k[i];
				double d = b * (v[j] - mv);
				for (int i = 0; i < D; i++)
					op += (Sh[i * D + j] += k[i] * d) * q[i];
				od[((int64_t)t * Hv + h) * D + j] = op;
			}
		}

	for (order_kind = 0; order_kind < 3; order_kind++) {
		S = S0;
		o.assign(on, NAN);
		arg = { qkv.data(), beta.data(), g.data(), ld, S.data(), n, Hk, Hv, D, o.data() };
		int rc = DK == 32 ? launch<32, 32>() : DK == 64 ? launch<64, 32>() : DS == 64 ? launch<128, 64>()
										  : launch<128, 32>();
		snprintf(what, sizeof what, "Dk %d, %d columns a block, Hk %d Hv %d, %d tokens, %s order", DK, DS, Hk, Hv,
			 n, order_kind == 0 ? "thread" : order_kind == 1 ? "reversed" : "random");
		if (rc < 0) {
			printf("not ok %d - %s: the block did not finish\n", ++checks, what);
			fails++;
			continue;
		}
		if (order_kind == 0) {
			check(what, "outputs", o, od);
			check(what, "final state", S, Sd);
			S1 = S;
			o1 = o;
		} else {
			int same = !memcmp(S.data(), S1.data(), 4 * sn) && !memcmp(o.data(), o1.data(), 4 * on);
			printf("%sok %d - %s: the same bits as in thread order\n", same ? "" : "not ", ++checks, what);
			fails += !same;
		}
	}
	fflush(stdout);
}

int main(void)
{
	for (int n : { 1, 17, 64, 65, 130 }) {
		run(32, 32, 2, 4, n);
		run(64, 32, 2, 4, n);
	}
	for (int n : { 17, 65 }) {
		run(128, 32, 1, 1, n);
		run(128, 32, 1, 2, n);
		run(128, 64, 1, 3, n);
	}
	run(128, 64, 1, 1, 130);
	printf("1..%d\n", checks);
	return fails != 0;
}
