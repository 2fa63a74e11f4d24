/* cuda-draw: top-k and top-p draws on the device against tf_sample on the
 * same logits and uniform numbers: 200 rows of up to 248320 ids at
 * temperatures 0.2 to 8, k from 1 to V - 1, p from 0 to 0.999, with runs of
 * equal probabilities, -inf logits and rows of one value; the same draw
 * twice, a captured draw replayed with another sampler, and each kind of
 * draw leaving its ids as the next step's inputs (tf_draw_next) */
#include "cudatest.h"
#include "decode/sample.h"

#ifndef TF_CUDA
int main(void)
{
	skip_all("built without CUDA");
}
#else
#include "sample.cuh"
#include "sample_top.cuh"

/* the logits a draw meets: kind 0 plain, 1 runs of equal values, 2 mostly
 * -inf, 3 a run of equal largest values, 4 one value, 5 a few far ahead of
 * the rest (a trained model's row), 6 equal values on a fine grid */
static void fill_row(float *l, int V, int kind)
{
	for (int i = 0; i < V; i++) {
		float x = rng_norm() * 4;
		if (kind == 1)
			x = rintf(x * 2) / 2;
		if (kind == 2 && i % 3)
			x = -INFINITY;
		if (kind == 3 && i % 7 == 0)
			x = 12;
		if (kind == 4)
			x = 1.5f;
		if (kind == 5)
			x = i % 9973 == 17 ? 20 + rng_unit() * 4 : x / 2;
		if (kind == 6)
			x = rintf(x * 64) / 64;
		l[i] = x;
	}
}

/* a random sampler with top-k or top-p on, as tf_sample takes it */
static tf_sampler pick_sampler(int V)
{
	static const float temps[] = { 0.2f, 0.6f, 1, 1.7f, 8 };
	static const float ps[] = { 1, 0.999f, 0.95f, 0.9f, 0.5f, 0.1f, 0 };
	const int ks[] = { 0, 1, 2, 7, 40, 500, 4000, V - 1, V };
	tf_sampler s = { .temp = temps[rng_next() % 5], .top_k = ks[rng_next() % 9], .top_p = ps[rng_next() % 7],
			 .rng = rng_next() };

	if (!tf_sample_cuts(&s, V))
		s.top_p = 0.9f;
	return s;
}

/* n rows of V: the device's draws against tf_sample's; the device draws
 * twice, and the second must repeat the first */
static void batch(int n, int V)
{
	float *l = malloc(4 * (int64_t)n * V);
	tf_draw_args *a = malloc(n * sizeof *a);
	int32_t *want = malloc(4 * n), *got = malloc(4 * n), *again = malloc(4 * n);
	int bad = 0;

	for (int r = 0; r < n; r++) {
		float *row = l + (int64_t)r * V;
		tf_sampler s = pick_sampler(V), s2 = s;
		fill_row(row, V, r % 7);
		want[r] = tf_sample(&s, row, V);
		a[r] = tf_draw_args_of(&s2);
	}
	float *dl = dev_copy(l, 4 * (int64_t)n * V);
	tf_draw_args *da = dev_copy(a, n * sizeof *a);
	int32_t *dout = tf_cuda_alloc(4 * n, "test");
	DIE_IF(tf_cuda_draw_reserve(n, V));
	DIE_IF(tf_cuda_sample_top(dl, n, V, da, dout, NULL));
	dev_get(got, dout, 4 * n);
	DIE_IF(tf_cuda_sample_top(dl, n, V, da, dout, NULL));
	dev_get(again, dout, 4 * n);
	for (int r = 0; r < n; r++)
		if (got[r] != want[r]) {
			diag("row %d (kind %d): temp %g top-k %d top-p %g u %.17g: device drew %d, tf_sample %d", r,
			     r % 7, a[r].temp, a[r].top_k, a[r].top_p, a[r].u, got[r], want[r]);
			bad++;
		}
	ok(!bad, "%d rows of %d: top-k/top-p draws equal tf_sample's", n, V);
	ok(!memcmp(got, again, 4 * n), "%d rows of %d: the same draw twice gives the same ids", n, V);
	free(l); free(a); free(want); free(got); free(again);
	tf_cuda_free(dl); tf_cuda_free(da); tf_cuda_free(dout);
}

/* a draw captured with one sampler and replayed with others: the sampler
 * is read from device memory, never baked into the graph */
static void replay(void)
{
	const int n = 4, V = 248320;
	float *l = malloc(4 * (int64_t)n * V);
	tf_draw_args *a = tf_cuda_host_alloc(n * sizeof *a);
	int32_t want[4], got[4];
	tf_cuda_graph *g = NULL;
	int bad = 0;

	for (int r = 0; r < n; r++)
		fill_row(l + (int64_t)r * V, V, 5);
	float *dl = dev_copy(l, 4 * (int64_t)n * V);
	tf_draw_args *da = tf_cuda_alloc(n * sizeof *a, "test");
	int32_t *dout = tf_cuda_alloc(4 * n, "test");
	DIE_IF(tf_cuda_draw_reserve(n, V));
	DIE_IF(tf_cuda_capture_begin());
	DIE_IF(tf_cuda_sample_top(dl, n, V, da, dout, NULL));
	DIE_IF(tf_cuda_capture_end(&g));
	for (int t = 0; t < 5; t++) {
		for (int r = 0; r < n; r++) {
			tf_sampler s = pick_sampler(V), s2 = s;
			want[r] = tf_sample(&s, l + (int64_t)r * V, V);
			a[r] = tf_draw_args_of(&s2);
		}
		/* as tf_gpu_step_draw: the sampler goes up, then the graph runs */
		DIE_IF(tf_cuda_upload_async(da, a, n * sizeof *a));
		DIE_IF(tf_cuda_graph_run(g));
		dev_get(got, dout, sizeof got);
		for (int r = 0; r < n; r++)
			bad += got[r] != want[r];
	}
	ok(!bad, "a captured draw replayed with 5 other samplers equals tf_sample");
	tf_cuda_graph_free(g);
	free(l);
	tf_cuda_host_free(a);
	tf_cuda_free(dl); tf_cuda_free(da); tf_cuda_free(dout);
}

/* each kind of draw of n rows, given where the next step's inputs live,
 * writes its ids there too and moves the position on by n, once a launch
 * (a captured one replayed twice: twice); without, touches neither */
static void feeds(void)
{
	const int n = 3, V = 4099;
	static const char *what[] = { "argmax", "a draw at a temperature", "a top-k/top-p draw" };
	float *l = malloc(4 * (int64_t)n * V);
	tf_draw_args a[3];

	for (int r = 0; r < n; r++) {
		tf_sampler s = pick_sampler(V);
		s.top_k = 40;
		fill_row(l + (int64_t)r * V, V, 5);
		a[r] = tf_draw_args_of(&s);
	}
	float *dl = dev_copy(l, 4 * (int64_t)n * V);
	tf_draw_args *da = dev_copy(a, sizeof a);
	int32_t *dout = tf_cuda_alloc(4 * n, "test"), *dids = tf_cuda_alloc(4 * n, "test");
	int64_t *dpos = tf_cuda_alloc(8, "test");
	DIE_IF(tf_cuda_draw_reserve(n, V));
	for (int kind = 0; kind < 3; kind++) {
		const int32_t junk[3] = { -7, -7, -7 };
		const int64_t start = 41;
		const tf_draw_next next = { .ids = dids, .pos = dpos };
		int32_t out[3], ids[3];
		int64_t pos;
		tf_cuda_graph *g = NULL;

		DIE_IF(tf_cuda_upload(dids, junk, sizeof junk));
		DIE_IF(tf_cuda_upload(dpos, &start, 8));
		/* without: the inputs stay as they were */
		DIE_IF(kind == 0 ? tf_cuda_argmax(dl, n, V, dout, NULL) : kind == 1 ? tf_cuda_sample(dl, n, V, da, dout, NULL)
		       : tf_cuda_sample_top(dl, n, V, da, dout, NULL));
		dev_get(ids, dids, sizeof ids);
		dev_get(&pos, dpos, 8);
		ok(!memcmp(ids, junk, sizeof ids) && pos == start, "%s without a next step leaves its inputs alone",
		   what[kind]);
		DIE_IF(tf_cuda_capture_begin());
		DIE_IF(kind == 0 ? tf_cuda_argmax(dl, n, V, dout, &next) : kind == 1 ? tf_cuda_sample(dl, n, V, da, dout, &next)
		       : tf_cuda_sample_top(dl, n, V, da, dout, &next));
		DIE_IF(tf_cuda_capture_end(&g));
		DIE_IF(tf_cuda_graph_run(g));
		dev_get(out, dout, sizeof out);
		dev_get(ids, dids, sizeof ids);
		dev_get(&pos, dpos, 8);
		ok(!memcmp(ids, out, sizeof ids) && pos == start + n && out[0] >= 0 && out[0] < V,
		   "%s of %d rows leaves its ids (%d, %d, %d) and position %lld for the next step", what[kind], n,
		   ids[0], ids[1], ids[2], (long long)pos);
		DIE_IF(tf_cuda_graph_run(g));
		dev_get(&pos, dpos, 8);
		ok(pos == start + 2 * n, "%s replayed moves the position on again (%lld)", what[kind], (long long)pos);
		tf_cuda_graph_free(g);
	}
	free(l);
	tf_cuda_free(dl); tf_cuda_free(da); tf_cuda_free(dout); tf_cuda_free(dids); tf_cuda_free(dpos);
}

int main(void)
{
	cuda_or_skip();
	feeds();
	batch(120, 248320);
	batch(40, 151937);
	batch(30, 4099);
	batch(10, 7);
	replay();
	return done();
}
#endif
