#include "glb_read.h"

#include <stdlib.h>
#include <string.h>

typedef struct json_cursor {
    const char *p, *end;
    bool failed;
} json_cursor;

static void skip_space(json_cursor *c)
{
    while (c->p < c->end && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r'))
        c->p++;
}

static bool literal(json_cursor *c, const char *word)
{
    size_t n = strlen(word);
    if ((size_t)(c->end - c->p) < n || memcmp(c->p, word, n) != 0)
        return false;
    c->p += n;
    return true;
}

/* A string; \uXXXX escapes below 0x80 only (plush writes nothing else escaped). */
static char *parse_string(json_cursor *c)
{
    if (c->p >= c->end || *c->p != '"')
        return NULL;
    c->p++;
    char *s = malloc((size_t)(c->end - c->p) + 1);
    size_t n = 0;
    while (s && c->p < c->end && *c->p != '"') {
        char ch = *c->p++;
        if (ch == '\\' && c->p < c->end) {
            char e = *c->p++;
            if (e == 'u' && c->end - c->p >= 4) {
                char hex[5] = {c->p[0], c->p[1], c->p[2], c->p[3], 0};
                ch = (char)strtol(hex, NULL, 16);
                c->p += 4;
            } else {
                ch = e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e;
            }
        }
        s[n++] = ch;
    }
    if (!s || c->p >= c->end) {
        free(s);
        return NULL;
    }
    c->p++;
    s[n] = '\0';
    return s;
}

static bool parse_value(json_cursor *c, json_value *v, int depth);
static void free_inner(json_value *v);

static bool push(json_value *v, json_value *item, char *key)
{
    json_value *items = realloc(v->items, (v->count + 1) * sizeof *items);
    if (!items)
        return false;
    v->items = items;
    if (v->type == JSON_OBJECT) {
        char **keys = realloc(v->keys, (v->count + 1) * sizeof *keys);
        if (!keys)
            return false;
        v->keys = keys;
        keys[v->count] = key;
    }
    items[v->count++] = *item;
    return true;
}

static bool parse_container(json_cursor *c, json_value *v, int depth)
{
    bool object = *c->p == '{';
    v->type = object ? JSON_OBJECT : JSON_ARRAY;
    c->p++;
    skip_space(c);
    if (c->p < c->end && *c->p == (object ? '}' : ']')) {
        c->p++;
        return true;
    }
    for (;;) {
        char *key = NULL;
        skip_space(c);
        if (object) {
            key = parse_string(c);
            skip_space(c);
            if (!key || c->p >= c->end || *c->p++ != ':') {
                free(key);
                return false;
            }
        }
        json_value item = {0};
        if (!parse_value(c, &item, depth + 1) || !push(v, &item, key)) {
            free(key);
            free_inner(&item);
            return false;
        }
        skip_space(c);
        if (c->p < c->end && *c->p == ',') {
            c->p++;
            continue;
        }
        if (c->p < c->end && *c->p == (object ? '}' : ']')) {
            c->p++;
            return true;
        }
        return false;
    }
}

static bool parse_value(json_cursor *c, json_value *v, int depth)
{
    skip_space(c);
    if (c->p >= c->end || depth > 64)
        return false;
    char ch = *c->p;
    if (ch == '{' || ch == '[')
        return parse_container(c, v, depth);
    if (ch == '"') {
        v->type = JSON_STRING;
        v->string = parse_string(c);
        return v->string != NULL;
    }
    if (literal(c, "true") || literal(c, "false")) {
        v->type = JSON_BOOL;
        v->number = c->p[-1] == 'e' && c->p[-2] == 'u';
        return true;
    }
    if (literal(c, "null")) {
        v->type = JSON_NULL;
        return true;
    }
    char buf[64];
    size_t n = 0;
    while (c->p < c->end && n < sizeof buf - 1 && strchr("+-0123456789.eE", *c->p))
        buf[n++] = *c->p++;
    buf[n] = '\0';
    char *endp = NULL;
    v->type = JSON_NUMBER;
    v->number = strtod(buf, &endp);
    return n > 0 && *endp == '\0';
}

static void free_inner(json_value *v)
{
    for (size_t i = 0; i < v->count; i++) {
        free_inner(&v->items[i]);
        if (v->keys)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->string);
}

void json_free(json_value *v)
{
    if (!v)
        return;
    free_inner(v);
    free(v);
}

json_value *json_parse(const char *text, size_t size)
{
    json_cursor c = {.p = text, .end = text + size};
    json_value *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    if (!parse_value(&c, v, 0)) {
        json_free(v);
        return NULL;
    }
    skip_space(&c);
    return v;
}

const json_value *json_get(const json_value *v, const char *key)
{
    if (!v || v->type != JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < v->count; i++)
        if (strcmp(v->keys[i], key) == 0)
            return &v->items[i];
    return NULL;
}

const json_value *json_at(const json_value *v, size_t i)
{
    return v && v->type == JSON_ARRAY && i < v->count ? &v->items[i] : NULL;
}

double json_num(const json_value *v, const char *key, double def)
{
    const json_value *m = json_get(v, key);
    return m && (m->type == JSON_NUMBER || m->type == JSON_BOOL) ? m->number : def;
}

static uint32_t le32(const uint8_t *p) { return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24; }

bool glb_open(const uint8_t *b, size_t size, glb_file *out)
{
    memset(out, 0, sizeof *out);
    if (size < 20 || memcmp(b, "glTF", 4) != 0 || le32(b + 4) != 2 || le32(b + 8) != size)
        return false;
    size_t jlen = le32(b + 12);
    if (memcmp(b + 16, "JSON", 4) != 0 || jlen > size - 20)
        return false;
    size_t at = 20 + jlen;
    if (at + 8 <= size && memcmp(b + at + 4, "BIN\0", 4) == 0) {
        size_t blen = le32(b + at);
        if (blen > size - at - 8)
            return false;
        out->bin = b + at + 8;
        out->bin_size = blen;
    }
    out->json = json_parse((const char *)b + 20, jlen);
    return out->json != NULL;
}

void glb_close(glb_file *g)
{
    json_free(g->json);
    memset(g, 0, sizeof *g);
}

float *glb_accessor(const glb_file *g, size_t index, size_t *count, int *components)
{
    const json_value *a = json_at(json_get(g->json, "accessors"), index);
    const json_value *type = json_get(a, "type");
    if (!a || !type || type->type != JSON_STRING)
        return NULL;
    static const struct { const char *name; int n; } types[] = {
        {"SCALAR", 1}, {"VEC2", 2}, {"VEC3", 3}, {"VEC4", 4}, {"MAT2", 4}, {"MAT3", 9}, {"MAT4", 16}};
    int nc = 0;
    for (size_t i = 0; i < sizeof types / sizeof *types; i++)
        if (strcmp(type->string, types[i].name) == 0)
            nc = types[i].n;
    int ct = (int)json_num(a, "componentType", 0);
    size_t csize = ct == 5126 || ct == 5125 ? 4 : ct == 5123 || ct == 5122 ? 2 : ct == 5121 || ct == 5120 ? 1 : 0;
    size_t n = (size_t)json_num(a, "count", 0);
    const json_value *view = json_at(json_get(g->json, "bufferViews"), (size_t)json_num(a, "bufferView", -1));
    if (!nc || !csize || !view)
        return NULL;
    size_t start = (size_t)json_num(view, "byteOffset", 0) + (size_t)json_num(a, "byteOffset", 0);
    size_t stride = (size_t)json_num(view, "byteStride", 0);
    size_t elem = csize * (size_t)nc;
    if (!stride)
        stride = elem;
    if (n && (start > g->bin_size || (n - 1) * stride + elem > g->bin_size - start))
        return NULL;
    float *out = malloc((n ? n : 1) * (size_t)nc * sizeof *out);
    for (size_t i = 0; out && i < n; i++)
        for (int k = 0; k < nc; k++) {
            const uint8_t *p = g->bin + start + i * stride + (size_t)k * csize;
            float v;
            if (ct == 5126)
                memcpy(&v, p, 4);
            else if (ct == 5125)
                v = (float)le32(p);
            else if (csize == 2)
                v = (float)(ct == 5122 ? (int16_t)(p[0] | p[1] << 8) : (uint16_t)(p[0] | p[1] << 8));
            else
                v = (float)(ct == 5120 ? (int8_t)p[0] : p[0]);
            out[i * (size_t)nc + (size_t)k] = v;
        }
    *count = n;
    *components = nc;
    return out;
}
