// jax-js: float `remainder` is 0 whenever the quotient is large: it is computed as
// x - floor(x / y) * y, not exactly.
//
// NumPy computes the floating remainder exactly (from fmod, which is exact in IEEE arithmetic):
// `remainder(float32 1e8, float32 0.3)` is 0.02635717, `remainder(float64 1e17, 3.0)` is 1.0,
// `remainder(float64 -7.07932543939553e16, float64 1.899999976158142)` is 0.34323061.
// jax-js 0.1.25 returns 0.0 for all three: with x / y past 2**24 (float32) or 2**53 (float64),
// floor(x / y) * y rounds back to x and the difference cancels. Small quotients are right
// (`7.5 % 2` is 1.5).
//
// Breaks LZ-NUM-001 / LZ-NUM-002 (remainder is of the "exact" tolerance class).
// Seen on @jax-js/jax 0.1.25, Wasm backend, Node 20. Prints jax-js's and NumPy's values;
// exits 1 while the bug is there, 0 once fixed.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array { constructor() { throw new Error("no float16 in Node 20"); } };
}
const jax = await import(new URL("../../src/minilazy/conformance/adapters/js/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href);
const np = jax.numpy;

// NumPy's remainder: fmod (JavaScript's %, exact), moved to the divisor's sign.
const exact = (x, y) => { const r = x % y; return r !== 0 && (r < 0) !== (y < 0) ? r + y : r; };
const cases = [
  ["float32", Float32Array, np.float32, [1e8, 7.5], [0.3, 2]],
  ["float64", Float64Array, np.float64, [1e17, -7.07932543939553e16, 7.5], [3, 1.899999976158142, 2]],
];
let bug = false;
for (const [name, T, dtype, x, y] of cases) {
  const xs = new T(x), ys = new T(y);
  const got = Array.from(np.remainder(np.array(xs, { dtype }), np.array(ys, { dtype })).dataSync());
  const want = Array.from(new T(Array.from(xs, (v, i) => exact(v, ys[i]))));
  const wrong = JSON.stringify(got) !== JSON.stringify(want);
  bug ||= wrong;
  console.log(`remainder(${name} ${JSON.stringify(Array.from(xs))}, ${JSON.stringify(Array.from(ys))}): jax-js ${JSON.stringify(got)}; NumPy ${JSON.stringify(want)}${wrong ? "   <-- wrong" : ""}`);
}
console.log(bug ? "BUG PRESENT" : "fixed");
process.exit(bug ? 1 : 0);
