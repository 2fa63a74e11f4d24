/*
 * bundle.h: tf-bundle(5), one mmap-able file holding a whole model.
 *
 *   off   size  field
 *    0     8    magic     "\x89TFB\r\n\x1a\n" (PNG-style: catches text-mode damage)
 *    8     4    version   u32 = 1
 *   12     4    hdr_len   u32 = 64
 *   16     8    man_off   u64 = 64, where the JSON manifest starts
 *   24     8    man_len   u64, its length in bytes (at most 1 GiB)
 *   32     8    data_off  u64, a multiple of 4096, >= man_off + man_len
 *   40     8    data_len  u64; the file is exactly data_off + data_len bytes
 *   48    16    reserved  zero
 *   64   ...    manifest, then zeros up to data_off
 *   data_off    tensor data: each tensor at data_off + offset, offset a
 *               multiple of 4096; its parts (codes, scales, biases) follow
 *               each other, each starting at a multiple of 64 bytes
 *
 * All integers little-endian. The manifest is a JSON object:
 *   "tf_bundle": 1, "config": {...}, "generation_config": {...} or null,
 *   "tokenizer": "<tokenizer.json text>" or null, "flags": [...],
 *   "tensors": [ {"name", "format", "shape", "bits", "group",
 *                 "scales_dtype", "path", "flags", "offset", "bytes",
 *                 "source", "sha256", "max_error"}, ... ]
 * format is "affine", "sign1" or a raw dtype ("bf16", "f32", "u32", ...);
 * shape is the logical shape ([rows, cols] of the float weight for affine
 * and sign1). man/tf-bundle.5 has every field.
 */
#ifndef TF_BUNDLE_H
#define TF_BUNDLE_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

#include "store.h"

#define TF_BUNDLE_MAGIC "\x89TFB\r\n\x1a\n"
#define TF_BUNDLE_VERSION 1
#define TF_BUNDLE_HDR 64
#define TF_BUNDLE_ALIGN 4096    /* every tensor starts on a page */
#define TF_BUNDLE_PART_ALIGN 64 /* every part of a tensor on a cache line */
#define TF_BUNDLE_MAX_MANIFEST (1ull << 30)

/* one tensor of the manifest */
typedef struct {
	char name[512];         /* normalized name, "layers.0.mlp.up_proj.weight" */
	char source[512];       /* name in the source checkpoint, or "" */
	int fmt;                /* TF_AFFINE, TF_SIGN1, or a raw dtype (TF_F32 ... TF_BOOL) */
	int ndim;
	int64_t shape[8];       /* logical shape */
	int bits, group;        /* affine 2..8 / 32,64,128; sign1 1 / 128; raw: dtype bits / 0 */
	int sdtype;             /* scales (and biases) dtype of affine and sign1 */
	const char *path;       /* how it was made: "kept", "mlx", "sign1", "quantized", "synth" */
	const char *flags[4];   /* NULL-terminated: "exact", "no_rotation", ... */
	char sha256[65];        /* of the source bytes, hex; "" when there is no source */
	double max_error;       /* largest |source - stored| after dequantization */
	uint64_t offset, bytes; /* filled by the writer, checked by the reader */
} tf_bundle_entry;

/* bytes of each part (codes/data, scales, biases; 0 when absent) and the
 * total with the 64-byte part alignment; -1 with a message when the entry is
 * not self-consistent */
int tf_bundle_parts(const tf_bundle_entry *e, uint64_t part[3], uint64_t *total);
const char *tf_bundle_fmt_name(int fmt);

/* 1 when the file starts with the bundle magic, 0 when not, -1 when unreadable */
int tf_bundle_is(const char *path);
/* fills a store from a bundle: config, tokenizer, raw tensors, and a
 * prebuilt weight for every affine and sign1 tensor (whose parts also appear
 * as tensors "<module>.weight", ".scales", ".biases"); -1 with a message */
int tf_bundle_load(tf_store *s, const char *path);
/* the validated manifest of a bundle (caller decrefs) and the file size */
json_t *tf_bundle_manifest(const char *path, uint64_t *file_size);
/* each tensor's stored bytes against its checksum, a line each to report
 * ("ok NAME", "BAD NAME: ...", "unchecked NAME: ..."); the counts of bad
 * and uncheckable tensors; -1 with a message when the bundle is unreadable
 * (pack/bundle_verify.c) */
int tf_bundle_verify(const char *path, FILE *report, long *bad, long *unchecked);

/* writing: begin, then per tensor begin / write... / part_end... / end */
typedef struct tf_bw tf_bw;
tf_bw *tf_bw_begin(const char *path, const json_t *config, const json_t *gen_config, const char *tokenizer,
		   int ntensors);
void tf_bw_flag(tf_bw *w, const char *flag);
int tf_bw_tensor_begin(tf_bw *w, const tf_bundle_entry *e);
int tf_bw_write(tf_bw *w, const void *p, uint64_t n);
int tf_bw_part_end(tf_bw *w);
/* e: the final entry (max_error, sha256 may have changed since begin) */
int tf_bw_tensor_end(tf_bw *w, const tf_bundle_entry *e);
/* writes the manifest and renames the file into place */
int tf_bw_finish(tf_bw *w);
/* removes the temporary file */
void tf_bw_abort(tf_bw *w);
/* bytes of tensor data written so far */
uint64_t tf_bw_size(const tf_bw *w);

#endif
