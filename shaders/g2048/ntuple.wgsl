// Bulk n-tuple network values: the twin of Network::value in src/game2048/ntuple.rs. One
// invocation per board: for each tuple and each of the 8 symmetries, gather the tuple's cells
// (read on the original board through the symmetry tables), look the weight up, and add it to
// that symmetry's partial sum; then combine the 8 sums pairwise, in the CPU's order.
//
// Weights live in up to four storage bindings of 2^25 words (128 MiB, the portable binding
// limit): f32 weights one per word, f16 weights two per word, widened to f32 with integer
// operations (exact, and needs neither the f16 extension nor unpack2x16float's downlevel
// support).

struct Params {
    // Boards in this dispatch.
    count: u32,
    tuples: u32,
    // 1 for f16 weights, 0 for f32.
    f16: u32,
    groups_x: u32,
    // Weights per stage, and the stage splits' exponents one per byte from the lowest (0:
    // none): a board's stage is how many of them its largest tile reaches.
    stage_len: u32,
    splits: u32,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> boards: array<vec2<u32>>;
// features[2t], features[2t + 1]: tuple t's cell count and weight offset; then, from index
// 2 * tuples, for tuple t and symmetry s the original board's cells it reads:
// features[2 * tuples + 48t + 6s + j].
@group(0) @binding(2) var<storage, read> features: array<u32>;
@group(0) @binding(3) var<storage, read_write> values: array<f32>;
@group(0) @binding(4) var<storage, read> w0: array<u32>;
@group(0) @binding(5) var<storage, read> w1: array<u32>;
@group(0) @binding(6) var<storage, read> w2: array<u32>;
@group(0) @binding(7) var<storage, read> w3: array<u32>;

// CHUNK_BITS (2^CHUNK_BITS words a weight binding) comes from the host, CHUNK_WORDS.

fn word(i: u32) -> u32 {
    let at = i & ((1u << CHUNK_BITS) - 1u);
    switch i >> CHUNK_BITS {
        case 0u: {
            return w0[at];
        }
        case 1u: {
            return w1[at];
        }
        case 2u: {
            return w2[at];
        }
        default: {
            return w3[at];
        }
    }
}

// IEEE binary16 bits to the f32 of the same value.
fn widen_f16(h: u32) -> f32 {
    let sign = (h & 0x8000u) << 16u;
    let exponent = (h >> 10u) & 31u;
    let mantissa = h & 1023u;
    if exponent == 0u {
        // Zero or subnormal: mantissa x 2^-24, exact in f32.
        let v = f32(mantissa) * 5.9604644775390625e-8;
        return bitcast<f32>(bitcast<u32>(v) | sign);
    }
    if exponent == 31u {
        return bitcast<f32>(sign | 0x7f800000u | (mantissa << 13u));
    }
    return bitcast<f32>(sign | ((exponent + 112u) << 23u) | (mantissa << 13u));
}

fn weight(i: u32) -> f32 {
    if params.f16 != 0u {
        return widen_f16((word(i >> 1u) >> (16u * (i & 1u))) & 0xffffu);
    }
    return bitcast<f32>(word(i));
}

fn cell(b: vec2<u32>, c: u32) -> u32 {
    if c < 8u {
        return (b.x >> (4u * c)) & 15u;
    }
    return (b.y >> (4u * (c - 8u))) & 15u;
}

@compute @workgroup_size(64)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lane: u32) {
    let i = (wg.y * params.groups_x + wg.x) * 64u + lane;
    if i >= params.count {
        return;
    }
    let b = boards[i];
    var largest = 0u;
    for (var c = 0u; c < 16u; c++) {
        largest = max(largest, cell(b, c));
    }
    var stage = 0u;
    for (var k = 0u; k < 4u; k++) {
        let e = (params.splits >> (8u * k)) & 255u;
        if e != 0u && largest >= e {
            stage += 1u;
        }
    }
    let stage_base = stage * params.stage_len;
    var p = array<f32, 8>(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0);
    let cells = 2u * params.tuples;
    for (var t = 0u; t < params.tuples; t++) {
        let k = features[2u * t];
        let offset = stage_base + features[2u * t + 1u];
        for (var s = 0u; s < 8u; s++) {
            let base = cells + 48u * t + 6u * s;
            var index = 0u;
            for (var j = 0u; j < k; j++) {
                index |= cell(b, features[base + j]) << (4u * j);
            }
            p[s] += weight(offset + index);
        }
    }
    values[i] = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
}
