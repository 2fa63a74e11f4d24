/*
 * synth-plan: --synth makes the tensors a real geometry has. The
 * shapes of the 9B and 27B geometries (model/geometry.c) against those of
 * the published checkpoints (copied below), and their tensor counts (27B:
 * 48 DeltaNet layers of 14 tensors, 16 attention layers of 11, and the
 * embedding, final norm and head: 851).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "model/geometry.h"
#include "pack/synth.h"
#include "tap.h"

static const tf_synth_tensor *find(const tf_synth_tensor *t, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(t[i].name, name))
			return &t[i];
	return NULL;
}

static int shape(const tf_synth_tensor *t, int n, const char *name, long d0, long d1)
{
	const tf_synth_tensor *x = find(t, n, name);

	return x && x->shape[0] == d0 && (d1 < 0 || x->shape[1] == d1);
}

static void check(const char *file, const long *s, int count)
{
	json_t *cfg = tf_geometry_config(file);
	tf_synth_tensor *t = NULL;
	int n = 0;

	if (!ok(cfg && tf_synth_plan(cfg, &t, &n) == 0, "%s: plan", file))
		return;
	ok(n == count, "%s: %d tensors (expected %d)", file, n, count);
	/* layer 0 is Gated DeltaNet, layer 3 full attention */
	ok(shape(t, n, "layers.3.self_attn.q_proj.weight", s[0], s[1]) &&
	   shape(t, n, "layers.3.self_attn.k_proj.weight", s[2], s[1]) &&
	   shape(t, n, "layers.3.self_attn.v_proj.weight", s[2], s[1]) &&
	   shape(t, n, "layers.3.self_attn.o_proj.weight", s[1], s[3]), "%s: attention shapes", file);
	ok(shape(t, n, "layers.0.linear_attn.in_proj_qkv.weight", s[4], s[1]) &&
	   shape(t, n, "layers.0.linear_attn.in_proj_z.weight", s[5], s[1]) &&
	   shape(t, n, "layers.0.linear_attn.in_proj_a.weight", s[6], s[1]) &&
	   shape(t, n, "layers.0.linear_attn.in_proj_b.weight", s[6], s[1]) &&
	   shape(t, n, "layers.0.linear_attn.conv1d.weight", s[4], 1) &&
	   shape(t, n, "layers.0.linear_attn.out_proj.weight", s[1], s[5]), "%s: DeltaNet shapes", file);
	ok(shape(t, n, "layers.0.mlp.gate_proj.weight", s[7], s[1]) &&
	   shape(t, n, "layers.0.mlp.up_proj.weight", s[7], s[1]) &&
	   shape(t, n, "layers.0.mlp.down_proj.weight", s[1], s[7]), "%s: MLP shapes", file);
	ok(shape(t, n, "embed_tokens.weight", 248320, s[1]) && shape(t, n, "lm_head.weight", 248320, s[1]),
	   "%s: embedding and untied head", file);
	free(t);
	json_decref(cfg);
}

int main(void)
{
	/* the checkpoints' q_proj rows, H, k/v rows, o_proj in, in_proj_qkv rows,
	 * in_proj_z rows, in_proj_a/b rows, I */
	static const long s9[] = { 8192, 4096, 1024, 4096, 8192, 4096, 32, 12288 };
	static const long s27[] = { 12288, 5120, 1024, 6144, 10240, 6144, 48, 17408 };
	check("qwen3.5-9b", s9, 24 * 14 + 8 * 11 + 3);
	check("qwen3.5-27b", s27, 851);
	ok(!tf_geometry_config("qwen3.5-70b") && strstr(tf_errmsg(), "unknown geometry"),
	   "an unknown geometry: %s", tf_errmsg());
	return done();
}
