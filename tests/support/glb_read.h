/* Reading a GLB back in tests: a small JSON tree and accessors as floats.
 *
 *   glb_file g;
 *   if (glb_open(bytes, size, &g)) {
 *       const json_value *acc = json_at(json_get(g.json, "accessors"), 0);
 *       float *v = glb_accessor(&g, 0, &count, &components);   // malloc'd, count * components floats
 *   }
 *   glb_close(&g);
 *
 * No cmocka here: failures come back as false / NULL. Only what plush writes is read: UTF-8 JSON, one BIN
 * chunk, tightly packed accessors (stride from bufferView.byteStride when present).
 */
#ifndef PLUSH_TESTS_GLB_READ_H
#define PLUSH_TESTS_GLB_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum json_type { JSON_NULL, JSON_BOOL, JSON_NUMBER, JSON_STRING, JSON_ARRAY, JSON_OBJECT } json_type;

typedef struct json_value {
    json_type type;
    double number;              /* numbers, and booleans as 0 / 1 */
    char *string;               /* strings */
    size_t count;               /* array items or object members */
    struct json_value *items;
    char **keys;                /* objects: the members' names */
} json_value;

/* Parses a whole JSON text; NULL on a syntax error. */
json_value *json_parse(const char *text, size_t size);
void json_free(json_value *v);
/* A member of an object, an item of an array (NULL when missing or v is not of that kind). */
const json_value *json_get(const json_value *v, const char *key);
const json_value *json_at(const json_value *v, size_t i);
/* A number member, or def when missing. */
double json_num(const json_value *v, const char *key, double def);

typedef struct glb_file {
    json_value *json;
    const uint8_t *bin;
    size_t bin_size;
} glb_file;

/* Checks the GLB header and chunk lengths and parses the JSON; bytes must outlive the file. */
bool glb_open(const uint8_t *bytes, size_t size, glb_file *out);
void glb_close(glb_file *g);
/* Accessor index as floats (normalised integers are not scaled); NULL when it is out of range or its data
 * lies outside the BIN chunk. */
float *glb_accessor(const glb_file *g, size_t index, size_t *count, int *components);

#endif
