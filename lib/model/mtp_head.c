/* mtp_head.c: finding and checking the multi-token-prediction head (mtp_head.h) */
#include <stdlib.h>
#include <string.h>

#include "base/err.h"
#include "mtp_head.h"

int tf_mtp_present(const tf_model *m)
{
	const tf_store *s = m->store;

	for (int i = 0; i < s->nt; i++)
		if (!strncmp(s->t[i].name, "mtp.", 4))
			return 1;
	for (int i = 0; i < s->nw; i++)
		if (!strncmp(s->wt[i].name, "mtp.", 4))
			return 1;
	return 0;
}

static const unsigned char one_full = 1;

tf_mtp *tf_mtp_open(const tf_model *m)
{
	int64_t H = m->c.hidden;
	tf_mtp *h;

	if (!tf_mtp_present(m))
		return tf_err("the model has no MTP head (mtp.* tensors)"), NULL;
	h = tf_calloc(1, sizeof *h);
	if (tf_store_weight(m->store, "mtp.fc", H, 2 * H, &h->fc) < 0 ||
	    !(h->norm_emb = tf_model_vec(m, "mtp.pre_fc_norm_embedding.weight", H, m->norm_add)) ||
	    !(h->norm_hid = tf_model_vec(m, "mtp.pre_fc_norm_hidden.weight", H, m->norm_add)) ||
	    !(h->norm = tf_model_vec(m, "mtp.norm.weight", H, m->norm_add)) ||
	    tf_layer_load(m, &h->layer, "mtp.layers.0.", 1) < 0) {
		tf_errpre("the model's MTP head");
		tf_mtp_close(h);
		return NULL;
	}
	/* the layer code reads its layer, geometry and caches through a model */
	h->view = *m;
	h->view.c.layers = 1;
	h->view.c.full = (unsigned char *)&one_full;
	h->view.layer = &h->layer;
	h->view.norm = h->norm;
	h->view.gpu = NULL;
	return h;
}

void tf_mtp_close(tf_mtp *h)
{
	if (!h)
		return;
	tf_layer_free(&h->layer);
	free(h->norm_emb);
	free(h->norm_hid);
	free(h->norm);
	free(h);
}
