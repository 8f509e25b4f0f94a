// Philox blocks and bounded draws for given inputs: checks the WGSL generator against Rust.
// Input per invocation: counter (4 words), key (2 words), n for `below`, and a pad word.
// Output per invocation: the 4 block words, then 4 draws below n from the stream
// (key, counter.yzw), 8 words in all.

@group(0) @binding(0) var<storage, read> inputs: array<u32>;
@group(0) @binding(1) var<storage, read_write> outputs: array<u32>;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) id: vec3<u32>) {
    let i = id.x;
    if i >= arrayLength(&inputs) / 8u {
        return;
    }
    let b = i * 8u;
    let counter = vec4<u32>(inputs[b], inputs[b + 1u], inputs[b + 2u], inputs[b + 3u]);
    let key = vec2<u32>(inputs[b + 4u], inputs[b + 5u]);
    let n = inputs[b + 6u];
    let block = philox4x32_10(counter, key);
    for (var j = 0u; j < 4u; j++) {
        outputs[b + j] = block[j];
    }
    var s = stream_new(key, counter.yzw);
    for (var j = 0u; j < 4u; j++) {
        outputs[b + 4u + j] = stream_below(&s, n);
    }
}
