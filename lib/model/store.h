/*
 * store.h: where a model's tensors come from.
 *
 * A store is opened from a checkpoint folder (config.json plus safetensors,
 * single or sharded; HF float or MLX affine-quantized), from a tf-bundle(5)
 * file, or from a GGUF file (or a folder holding one, or a split set), whose
 * tensors gguf_qwen35.c renames and converts. Tensor names are normalized: the flavour prefix is stripped
 * ("model.language_model.", "language_model.model.", "model."), the head is
 * "lm_head.weight", the multi-token-prediction head keeps its "mtp.*"
 * names, and "model.visual.*", "vision_tower.*" are skipped. So the model
 * asks for "layers.3.self_attn.q_proj" whatever the checkpoint called it.
 */
#ifndef TF_STORE_H
#define TF_STORE_H

#include <jansson.h>
#include <stdint.h>

#include "weight.h"

/* raw tensor dtypes beyond weight.h's TF_F32/TF_BF16/TF_F16 */
enum { TF_U32 = 16, TF_I32, TF_U8, TF_I8, TF_U16, TF_I16, TF_F64, TF_I64, TF_U64, TF_BOOL };

typedef struct {
	char *name;             /* normalized name */
	char *src;              /* name as stored in the file */
	int dtype;
	int ndim;
	int64_t shape[8];
	const void *data;       /* into a mapping; may be unaligned */
	uint64_t bytes;
} tf_tensor;

typedef struct {
	char *name;             /* normalized module name, "layers.0.mlp.up_proj" */
	tf_weight w;
} tf_named_weight;

typedef struct tf_map tf_map;  /* one mapped file */

typedef struct {
	char *path;
	json_t *config;         /* config.json (the whole file, with text_config if any) */
	json_t *gen_config;     /* generation_config.json, or NULL */
	char *tokenizer_json;   /* tokenizer.json text, or NULL */
	tf_tensor *t;           /* (nt) sorted by name */
	int nt;
	tf_named_weight *wt;    /* (nw) prebuilt weights (bundles), sorted by name */
	int nw;
	tf_map **maps;
	int nmaps;
	void **owned;           /* (nowned) tensor data converted at load (GGUF), freed with the store */
	int nowned;
	int gguf;               /* opened from a GGUF */
} tf_store;

/* opens a folder or a bundle; NULL with tf_errmsg() set on failure */
tf_store *tf_store_open(const char *path);
void tf_store_close(tf_store *s);
/* the raw tensor of a normalized name, or NULL */
const tf_tensor *tf_store_find(const tf_store *s, const char *name);
/* whether a module has a weight: a prebuilt one or "<module>.weight" */
int tf_store_has_weight(const tf_store *s, const char *module);
/* the weight of a module (name without ".weight"): a prebuilt one, a float
 * tensor "<module>.weight", or an MLX triplet "<module>.{weight,scales,biases}"
 * whose bits and group come from the config's quantization section; checks
 * the shape against rows x cols when those are not 0; -1 with a message */
int tf_store_weight(const tf_store *s, const char *module, int64_t rows, int64_t cols, tf_weight *w);

/* safetensors files: adds the tensors of one file to the store */
int tf_st_load(tf_store *s, const char *file);
/* normalizes a stored tensor name; NULL when the tensor is to be skipped */
char *tf_norm_name(const char *src);
int tf_dtype_parse(const char *s);
int tf_dtype_bytes(int dtype);
const char *tf_dtype_str(int dtype);

#endif
