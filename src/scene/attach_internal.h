/* Between the attach files: attach.c asks attach_params.c whether the caller set any parameter. */
#ifndef PLUSH_SCENE_ATTACH_INTERNAL_H
#define PLUSH_SCENE_ATTACH_INTERNAL_H

#include "plush/scene_attach.h"

/* Every parameter field zero (padding aside): the caller chose none, so the "plush" preset applies. */
bool plush__attach_soft_unset(const plush_pmx_soft_body *sb);

#endif
