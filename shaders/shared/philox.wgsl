// Philox4x32-10 and sequential random streams: the twin of crates/core/src/rng.rs, word for word.
// WGSL has no 32x32->64 multiply, so the high word is built from 16-bit halves.

// (hi, lo) of the 64-bit product a * b.
fn mul_hi_lo(a: u32, b: u32) -> vec2<u32> {
    let a0 = a & 0xffffu;
    let a1 = a >> 16u;
    let b0 = b & 0xffffu;
    let b1 = b >> 16u;
    let ll = a0 * b0;
    let lh = a0 * b1;
    let hl = a1 * b0;
    let mid = (ll >> 16u) + (lh & 0xffffu) + (hl & 0xffffu);
    let hi = a1 * b1 + (lh >> 16u) + (hl >> 16u) + (mid >> 16u);
    return vec2<u32>(hi, a * b);
}

fn philox_round(c: vec4<u32>, k: vec2<u32>) -> vec4<u32> {
    let p0 = mul_hi_lo(0xD2511F53u, c.x);
    let p1 = mul_hi_lo(0xCD9E8D57u, c.z);
    return vec4<u32>(p1.x ^ c.y ^ k.x, p1.y, p0.x ^ c.w ^ k.y, p0.y);
}

// The ten rounds are written out: llvmpipe (lavapipe) stops a SIMD group after 65,535 loop
// iterations in all, so the kernels keep loops for work whose length is data-dependent.
fn philox4x32_10(counter: vec4<u32>, key: vec2<u32>) -> vec4<u32> {
    let w = vec2<u32>(0x9E3779B9u, 0xBB67AE85u);
    var c = philox_round(counter, key);
    c = philox_round(c, key + w);
    c = philox_round(c, key + 2u * w);
    c = philox_round(c, key + 3u * w);
    c = philox_round(c, key + 4u * w);
    c = philox_round(c, key + 5u * w);
    c = philox_round(c, key + 6u * w);
    c = philox_round(c, key + 7u * w);
    c = philox_round(c, key + 8u * w);
    return philox_round(c, key + 9u * w);
}

// Blocks at counters (block, id.x, id.y, id.z) for block = 0, 1, ...
struct Stream {
    key: vec2<u32>,
    id: vec3<u32>,
    block: u32,
    buf: vec4<u32>,
    pos: u32,
}

fn stream_new(key: vec2<u32>, id: vec3<u32>) -> Stream {
    return Stream(key, id, 0u, vec4<u32>(0u), 4u);
}

fn stream_next(s: ptr<function, Stream>) -> u32 {
    if (*s).pos == 4u {
        (*s).buf = philox4x32_10(vec4<u32>((*s).block, (*s).id), (*s).key);
        (*s).block += 1u;
        (*s).pos = 0u;
    }
    let x = (*s).buf[(*s).pos];
    (*s).pos += 1u;
    return x;
}

// Uniform in 0..n, exactly: Lemire's multiply-shift with rejection of the biased words.
fn stream_below(s: ptr<function, Stream>, n: u32) -> u32 {
    var m = mul_hi_lo(stream_next(s), n);
    if m.y < n {
        let threshold = (0u - n) % n;
        while m.y < threshold {
            m = mul_hi_lo(stream_next(s), n);
        }
    }
    return m.x;
}
