/* plush: make PMX models move like plush toys. One include for every module.
 *
 * A public header's name is its functions' prefix and leads to its folder: plush/<module>.h and
 * plush/<module>_<part>.h are src/<module>/ (attach.h is src/attach, compare.h src/compare, quality.h
 * src/quality, cage.h src/proxy, scene_sink.h src/export). The format module is the exception by rule:
 * one header per file format (pmx.h, vmd.h, vpd.h, im2.h, obj.h), all of them src/format. demo.h is the
 * built-in demo model (src/demo). plush/sys/<module>.h holds the extension-level functions plush's own
 * modules, tool and tests use beside a public header (utilities, the physics world, drawing); a host
 * program needs none of them, and this header includes none.
 */
#ifndef PLUSH_H
#define PLUSH_H
#include "plush/core.h"
#include "plush/pmx.h"
#include "plush/im2.h"
#include "plush/vmd.h"
#include "plush/vpd.h"
#include "plush/obj.h"
#include "plush/proxy.h"
#include "plush/cage.h"
#include "plush/anim.h"
#include "plush/physics.h"
#include "plush/scene.h"
#include "plush/scene_sink.h"
#include "plush/quality.h"
#include "plush/scene_proxy.h"
#include "plush/attach.h"
#include "plush/compare.h"
#include "plush/demo.h"
#endif
