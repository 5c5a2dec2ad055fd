// jax-js: `argmax`/`argmin` of an array holding NaN return an index one past the end, and
// a one-element NaN array is False (`all`, `any`, `astype(bool)`).
//
// NumPy: `argmax([nan])` and `argmin([nan])` are 0, and `argmax([1, nan, 5])` is 1 (the first
// NaN: NaN propagates through max, min, argmax and argmin); NaN is truthy, so `all([nan])`,
// `any([nan])` and `[nan].astype(bool)` are True. jax-js 0.1.25 returns the axis length (1 for
// `[nan]`, 3 for `[1, nan, 5]`: an index out of range), and for a one-element array (0-d,
// [1], [1, 1]) converts NaN to False, in `all`, `any`, `astype(bool)` and `logical_not` alike;
// two or more NaNs convert to True as they should.
//
// Breaks LZ-NUM-010 (reductions over any axes match the oracle, NaN included).
// Seen on @jax-js/jax 0.1.25, Wasm backend, Node 20. Prints jax-js's and NumPy's values;
// exits 1 while the bug is there, 0 once fixed.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array { constructor() { throw new Error("no float16 in Node 20"); } };
}
const jax = await import(new URL("../../src/minilazy/conformance/adapters/js/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href);
const np = jax.numpy;

const f32 = (...v) => np.array(new Float32Array(v), { dtype: np.float32 });
const cases = [
  ["argmax([nan])", () => np.argmax(f32(NaN)), 0],
  ["argmin([nan])", () => np.argmin(f32(NaN)), 0],
  ["argmax([1, nan, 5])", () => np.argmax(f32(1, NaN, 5)), 1],
  ["argmin([1, nan, -5])", () => np.argmin(f32(1, NaN, -5)), 1],
  ["all([nan])", () => np.all(f32(NaN)), 1],
  ["any([nan])", () => np.any(f32(NaN)), 1],
  ["astype([nan], bool)", () => np.astype(f32(NaN), np.bool), 1],
  ["astype([nan, nan], bool)[0]", () => np.astype(f32(NaN, NaN), np.bool), 1],
];
let bug = false;
for (const [what, f, want] of cases) {
  const got = Number(f().dataSync()[0]);
  const wrong = got !== want;
  bug ||= wrong;
  console.log(`${what}: jax-js ${got}; NumPy ${want}${wrong ? "   <-- wrong" : ""}`);
}
console.log(bug ? "BUG PRESENT" : "fixed");
process.exit(bug ? 1 : 0);
