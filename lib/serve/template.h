/*
 * template.h: the chat template a model folder ships, as
 * transformers finds it: chat_template.jinja, else tokenizer_config.json's
 * "chat_template" (a string, or the one named "default" of a list).
 */
#ifndef TF_SERVE_TEMPLATE_H
#define TF_SERVE_TEMPLATE_H

/* the template's text (a new string), or NULL when there is none */
char *tf_chat_template_of(const char *model);

#endif
