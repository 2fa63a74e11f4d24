/*
 * bundle_write.c: writing tf-bundle(5) files in one streaming pass.
 *
 * Tensor data goes straight to its place after a region reserved for the
 * manifest, so nothing is held in memory and tensors can be made one at a
 * time; the manifest (which needs every tensor's error and offset) is
 * written into the reserved region at the end. The reserve is the size of
 * the config and tokenizer plus a fixed budget per tensor, far more than an
 * entry needs. The file is written under a temporary name and renamed only
 * when complete (out.h), so an interrupted pack leaves nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "hub/hubsum.h"
#include "io/out.h"
#include "model/bundle.h"

#define ENTRY_BUDGET 2048       /* manifest bytes reserved per tensor */

struct tf_bw {
	tf_out out;
	char *path;
	uint64_t data_off;      /* where tensor data starts in the file */
	uint64_t pos;           /* bytes of data written, relative to data_off */
	json_t *manifest;       /* config, tokenizer, flags, tensors */
	int ntensors, reserved_tensors;
	/* the tensor being written */
	int open;
	tf_bundle_entry cur;
	uint64_t part[3], total, start, part_written;
	int part_idx;
	tf_sum data_sum;        /* sha256 of the open tensor's bytes as stored */
};

static const unsigned char zeros[TF_BUNDLE_ALIGN];

static int put(tf_bw *w, const void *p, uint64_t n)
{
	if (n && fwrite(p, 1, n, w->out.f) != n)
		return tf_err("cannot write '%s':", w->path);
	/* an open tensor's bytes, the padding between its parts included,
	 * are what its data_sha256 covers (tf-pack --verify) */
	if (w->open && n && tf_sum_add(&w->data_sum, p, n))
		return -1;
	return 0;
}

static int pad_to(tf_bw *w, uint64_t align)
{
	uint64_t n = (align - w->pos % align) % align;

	if (put(w, zeros, n) < 0)
		return -1;
	w->pos += n;
	return 0;
}

tf_bw *tf_bw_begin(const char *path, const json_t *config, const json_t *gen_config, const char *tokenizer,
		   int ntensors)
{
	tf_bw *w;
	json_t *tok = tokenizer ? json_string(tokenizer) : json_null();
	char *js;
	uint64_t reserve;

	if (!strcmp(path, "-"))
		return tf_err("a bundle cannot be written to stdout: it is filled out of order"), NULL;
	if (tokenizer && !tok)
		return tf_err("tokenizer text is not valid UTF-8"), NULL;
	w = tf_calloc(1, sizeof *w);
	w->path = tf_strdup(path);
	w->manifest = json_object();
	json_object_set_new(w->manifest, "tf_bundle", json_integer(TF_BUNDLE_VERSION));
	json_object_set_new(w->manifest, "config", json_deep_copy(config));
	json_object_set_new(w->manifest, "generation_config", gen_config ? json_deep_copy(gen_config) : json_null());
	json_object_set_new(w->manifest, "tokenizer", tok);
	json_object_set_new(w->manifest, "flags", json_array());
	json_object_set_new(w->manifest, "tensors", json_array());
	js = json_dumps(w->manifest, JSON_COMPACT);
	reserve = strlen(js) + (uint64_t)ntensors * ENTRY_BUDGET + 1024;
	free(js);
	w->reserved_tensors = ntensors;
	w->data_off = (TF_BUNDLE_HDR + reserve + TF_BUNDLE_ALIGN - 1) / TF_BUNDLE_ALIGN * TF_BUNDLE_ALIGN;
	if (tf_out_open_file(&w->out, path) < 0)
		goto fail;
	setvbuf(w->out.f, NULL, _IOFBF, 1 << 22);
	if (fseeko(w->out.f, w->data_off, SEEK_SET) < 0) {
		tf_err("cannot seek in '%s':", path);
		goto fail;
	}
	return w;
fail:
	tf_bw_abort(w);
	return NULL;
}

void tf_bw_flag(tf_bw *w, const char *flag)
{
	json_array_append_new(json_object_get(w->manifest, "flags"), json_string(flag));
}

uint64_t tf_bw_size(const tf_bw *w)
{
	return w->pos;
}

int tf_bw_tensor_begin(tf_bw *w, const tf_bundle_entry *e)
{
	if (w->open)
		return tf_err("bundle writer: tensor '%s' begun inside '%s'", e->name, w->cur.name);
	if (w->ntensors >= w->reserved_tensors)
		return tf_err("bundle writer: more tensors than the %d announced", w->reserved_tensors);
	if (tf_bundle_parts(e, w->part, &w->total) < 0)
		return -1;
	if (pad_to(w, TF_BUNDLE_ALIGN) < 0)
		return -1;
	w->cur = *e;
	w->start = w->pos;
	w->part_idx = 0;
	w->part_written = 0;
	if (tf_sum_init_sha256(&w->data_sum))
		return -1;
	w->open = 1;
	return 0;
}

int tf_bw_write(tf_bw *w, const void *p, uint64_t n)
{
	if (!w->open || w->part_idx > 2 || w->part_written + n > w->part[w->part_idx])
		return tf_err("bundle writer: tensor '%s': more bytes than its part %d holds", w->cur.name,
			      w->part_idx);
	if (put(w, p, n) < 0)
		return -1;
	w->part_written += n;
	w->pos += n;
	return 0;
}

int tf_bw_part_end(tf_bw *w)
{
	if (!w->open || w->part_idx > 2 || w->part_written != w->part[w->part_idx])
		return tf_err("bundle writer: tensor '%s': part %d is %llu bytes short", w->cur.name, w->part_idx,
			      (unsigned long long)(w->part[w->part_idx] - w->part_written));
	w->part_idx++;
	w->part_written = 0;
	if (w->part_idx < 3 && w->part[w->part_idx])
		return pad_to(w, TF_BUNDLE_PART_ALIGN);
	return 0;
}

static json_t *entry_json(const tf_bundle_entry *e, const char *data_sha)
{
	json_t *o = json_object(), *shape = json_array(), *flags = json_array();

	json_object_set_new(o, "name", json_string(e->name));
	json_object_set_new(o, "format", json_string(tf_bundle_fmt_name(e->fmt)));
	for (int i = 0; i < e->ndim; i++)
		json_array_append_new(shape, json_integer(e->shape[i]));
	json_object_set_new(o, "shape", shape);
	if (e->fmt == TF_AFFINE || e->fmt == TF_SIGN1) {
		json_object_set_new(o, "bits", json_integer(e->bits));
		json_object_set_new(o, "group", json_integer(e->group));
		json_object_set_new(o, "scales_dtype", json_string(tf_bundle_fmt_name(e->sdtype)));
	} else {
		json_object_set_new(o, "bits", json_integer(8 * tf_dtype_bytes(e->fmt)));
		json_object_set_new(o, "group", json_integer(0));
	}
	json_object_set_new(o, "path", json_string(e->path ? e->path : "kept"));
	for (int i = 0; i < 4 && e->flags[i]; i++)
		json_array_append_new(flags, json_string(e->flags[i]));
	json_object_set_new(o, "flags", flags);
	json_object_set_new(o, "offset", json_integer(e->offset));
	json_object_set_new(o, "bytes", json_integer(e->bytes));
	json_object_set_new(o, "source", e->source[0] ? json_string(e->source) : json_null());
	json_object_set_new(o, "sha256", e->sha256[0] ? json_string(e->sha256) : json_null());
	json_object_set_new(o, "data_sha256", json_string(data_sha));
	json_object_set_new(o, "max_error", json_real(e->max_error));
	return o;
}

int tf_bw_tensor_end(tf_bw *w, const tf_bundle_entry *e)
{
	tf_bundle_entry fin = *e;

	if (!w->open)
		return tf_err("bundle writer: no tensor is open");
	while (w->part_idx < 3 && !w->part[w->part_idx] && w->part_written == 0)
		w->part_idx++;
	if (w->part_idx < 3)
		return tf_err("bundle writer: tensor '%s' ended with part %d unwritten", w->cur.name, w->part_idx);
	if (w->pos - w->start != w->total)
		return tf_err("bundle writer: tensor '%s' is %llu bytes, expected %llu", w->cur.name,
			      (unsigned long long)(w->pos - w->start), (unsigned long long)w->total);
	char hex[65];
	fin.offset = w->start;
	fin.bytes = w->total;
	w->open = 0;
	if (tf_sum_hex(&w->data_sum, hex))
		return -1;
	json_array_append_new(json_object_get(w->manifest, "tensors"), entry_json(&fin, hex));
	w->ntensors++;
	return 0;
}

static void le32put(unsigned char *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = v >> (8 * i);
}

static void le64put(unsigned char *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = v >> (8 * i);
}

int tf_bw_finish(tf_bw *w)
{
	unsigned char h[TF_BUNDLE_HDR] = { 0 };
	char *js;
	size_t len;
	int rc = -1;

	if (w->open) {
		tf_err("bundle writer: tensor '%s' was not finished", w->cur.name);
		goto out;
	}
	js = json_dumps(w->manifest, JSON_COMPACT);
	if (!js) {
		tf_err("cannot encode the manifest of '%s'", w->path);
		goto out;
	}
	len = strlen(js);
	if (TF_BUNDLE_HDR + len > w->data_off) {
		tf_err("manifest of '%s' is %zu bytes, more than the %llu reserved", w->path, len,
		       (unsigned long long)(w->data_off - TF_BUNDLE_HDR));
		free(js);
		goto out;
	}
	memcpy(h, TF_BUNDLE_MAGIC, 8);
	le32put(h + 8, TF_BUNDLE_VERSION);
	le32put(h + 12, TF_BUNDLE_HDR);
	le64put(h + 16, TF_BUNDLE_HDR);
	le64put(h + 24, len);
	le64put(h + 32, w->data_off);
	le64put(h + 40, w->pos);
	if (fseeko(w->out.f, 0, SEEK_SET) < 0) {
		tf_err("cannot seek in '%s':", w->path);
		free(js);
		goto out;
	}
	rc = put(w, h, sizeof h);
	if (!rc)
		rc = put(w, js, len);
	free(js);
	/* zeros up to the data, so the file has no holes */
	for (uint64_t at = TF_BUNDLE_HDR + len; !rc && at < w->data_off;) {
		uint64_t n = w->data_off - at < sizeof zeros ? w->data_off - at : sizeof zeros;
		rc = put(w, zeros, n);
		at += n;
	}
	if (!rc)
		rc = tf_out_close(&w->out);
out:
	if (rc)
		tf_out_abort(&w->out);
	json_decref(w->manifest);
	free(w->path);
	free(w);
	return rc;
}

void tf_bw_abort(tf_bw *w)
{
	if (!w)
		return;
	if (w->open)
		tf_sum_free(&w->data_sum);
	tf_out_abort(&w->out);
	json_decref(w->manifest);
	free(w->path);
	free(w);
}
