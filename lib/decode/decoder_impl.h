/* decoder_impl.h: what a decoder holds, for the files of decode/ alone */
#ifndef TF_DECODER_IMPL_H
#define TF_DECODER_IMPL_H

#include "cpu/state.h"
#include "decoder.h"
#include "gpu/gpu.h"

struct tf_decoder {
	const tf_model *m;
	int64_t pos;            /* positions the sequence holds */
	tf_state *cpu;          /* the CPU reference's state, or */
	tf_gpu_seq *gpu;        /* the GPU's, when the model's weights are there */
	float *logits;          /* (V) a step's logits when the host draws */
	tf_pass_progress progress;      /* told how far a prompt pass is */
	/* with tf_decoder_keep_hidden: the last hidden states (after the final
	 * norm) of the positions taken since the last tf_decoder_hidden_drop */
	int keep;
	float *hid;             /* (hid_cap, H) rows of positions hid_first .. hid_first + hid_n - 1 */
	int64_t hid_first, hid_n, hid_cap;
	float *tree_hid;        /* (tree_cap, H) the last tree pass's nodes', until its commit */
	int64_t tree_cap;
};

/* room for the hidden rows of a pass of n more positions (NULL when none
 * are kept); tf_decoder_hidden_took counts them in once the pass is done */
float *tf_decoder_hidden_room(tf_decoder *d, int64_t n);
void tf_decoder_hidden_took(tf_decoder *d, int64_t n);

#endif
