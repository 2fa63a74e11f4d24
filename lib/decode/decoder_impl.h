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
};

#endif
