/* plush: make PMX models move like plush toys. One include for every module. */
#ifndef PLUSH_H
#define PLUSH_H
#include "plush/core.h"
#include "plush/pmx.h"
#include "plush/pmx_mesh.h"
#include "plush/im2.h"
#include "plush/vmd.h"
#include "plush/vpd.h"
#include "plush/proxy.h"
#include "plush/anim.h"
#include "plush/physics.h"
#include "plush/obj.h"
#include "plush/obj_read.h"
#include "plush/image.h"
#include "plush/cage.h"
#include "plush/scene.h"
#include "plush/scene_sink.h"
#include "plush/attach.h"
#include "plush/compare.h"
#endif
