/* CPU kernels for the interposer's tests (see tests/workloads/include/hrr_cpu_kernel.h).
 *
 * fill(uint32_t *out, uint32_t v, uint32_t n)          out[i] = v + i
 * gather(struct span s, uint32_t *dst)                 dst[i] = s.src[i] * 2 + s.tag
 *     struct span { uint32_t tag; const uint32_t *src; uint32_t n; }  (24 bytes, pointer at 8)
 * poke(struct packed_ref r, uint32_t v)                r.p[r.tag] = v
 *     struct __attribute__((packed)) packed_ref { uint8_t tag; uint32_t *p; }  (9 bytes, pointer at 1)
 * nop(uint32_t *a, uint32_t *b, uint64_t x, uint32_t y)  does nothing (launch-rate benchmark) */
#include "hrr_cpu_kernel.h"

HRR_KERNEL(fill) {
    uint32_t *out = HRR_ARG(uint32_t *, 0);
    uint32_t v = HRR_ARG(uint32_t, 8);
    uint32_t n = HRR_ARG(uint32_t, 12);
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < n) out[i] = v + (uint32_t)i;
    }
}

struct span {
    uint32_t tag;
    const uint32_t *src;
    uint32_t n;
};

HRR_KERNEL(gather) {
    const struct span *s = (const struct span *)kernarg;
    uint32_t *dst = HRR_ARG(uint32_t *, 24);
    HRR_FOR_EACH_THREAD(tx, ty, tz) {
        uint64_t i = hrr_global_id_x(l, tx);
        if (i < s->n) dst[i] = s->src[i] * 2 + s->tag;
    }
}

struct __attribute__((packed)) packed_ref {
    uint8_t tag;
    uint32_t *p;
};

HRR_KERNEL(poke) {
    const struct packed_ref *r = (const struct packed_ref *)kernarg;
    uint32_t v = HRR_ARG(uint32_t, 12);
    if (l->block_idx.x == 0) r->p[r->tag] = v;
}

HRR_KERNEL(nop) {
    (void)l;
    (void)kernarg;
}

HRR_KERNEL_METADATA("{\"kernels\":["
    "{\"name\":\"fill\",\"args\":["
        "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
        "{\"offset\":8,\"size\":4,\"value_kind\":\"by_value\"},"
        "{\"offset\":12,\"size\":4,\"value_kind\":\"by_value\"},"
        "{\"offset\":16,\"size\":8,\"value_kind\":\"hidden_global_offset_x\"}]},"
    "{\"name\":\"gather\",\"args\":["
        "{\"offset\":0,\"size\":24,\"value_kind\":\"by_value\"},"
        "{\"offset\":24,\"size\":8,\"value_kind\":\"global_buffer\"}]},"
    "{\"name\":\"poke\",\"args\":["
        "{\"offset\":0,\"size\":9,\"value_kind\":\"by_value\"},"
        "{\"offset\":12,\"size\":4,\"value_kind\":\"by_value\"}]},"
    "{\"name\":\"nop\",\"args\":["
        "{\"offset\":0,\"size\":8,\"value_kind\":\"global_buffer\"},"
        "{\"offset\":8,\"size\":8,\"value_kind\":\"global_buffer\"},"
        "{\"offset\":16,\"size\":8,\"value_kind\":\"by_value\"},"
        "{\"offset\":24,\"size\":4,\"value_kind\":\"by_value\"}]}"
    "]}");
