// jax-js: a reduction over a zero-length axis returns whatever its output memory last held.
//
// NumPy: `sum(zeros((4, 0)), axis=1)` is `[0, 0, 0, 0]` and `prod` of it `[1, 1, 1, 1]` (the
// identities); `max`/`min` of it raise ValueError ("zero-size array to reduction operation
// maximum which has no identity"). jax-js 0.1.25's Wasm kernel for a reduction of length 0 never
// writes its output, so the result is the stale contents of a freed buffer: here the values of
// an unrelated array computed and read just before (`[1000.5, 2001, ...]`). `max`, `min` of an
// empty axis raise nothing either. The oracle met it as `sum(bool (4, 0), axis=1,
// dtype=uint32)` returning `[0, 3205496832, 2132253879, 2090459165]`.
//
// Breaks LZ-NUM-010 (reductions over any axes, empty ones included, match the oracle) and
// LZ-ERR-001 (a reduction without identity over no elements raises at the call).
// Seen on @jax-js/jax 0.1.25, Wasm backend, Node 20. Prints jax-js's and NumPy's values;
// exits 1 while the bug is there, 0 once fixed.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array { constructor() { throw new Error("no float16 in Node 20"); } };
}
const jax = await import(new URL("../../src/minilazy/conformance/adapters/js/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href);
const np = jax.numpy;

const stale = (k) => np.multiply(np.array(new Float32Array([1, 2, 3, 4]), { dtype: np.float32 }), k).dataSync();
const cases = [
  ["sum(zeros((4, 0)), axis=1)", 1000.5, (x) => np.sum(x, 1), [0, 0, 0, 0]],
  ["prod(zeros((4, 0)), axis=1)", 3.25, (x) => np.prod(x, 1), [1, 1, 1, 1]],
  ["max(zeros((4, 0)), axis=1)", 7.5, (x) => np.max(x, 1), "ValueError"],
];
let bug = false;
for (const [what, k, f, want] of cases) {
  stale(k);  // an unrelated array, computed, read and freed: its buffer is reused
  let got;
  try { got = JSON.stringify(Array.from(f(np.zeros([4, 0], { dtype: np.float32 })).dataSync())); } catch (e) { got = `${e.constructor.name}: ${e.message}`; }
  const ok = want === "ValueError" ? !got.startsWith("[") : got === JSON.stringify(want);
  bug ||= !ok;
  console.log(`${what}: jax-js ${got}; NumPy ${want === "ValueError" ? "raises ValueError" : JSON.stringify(want)}${ok ? "" : "   <-- wrong"}`);
}
console.log(bug ? "BUG PRESENT" : "fixed");
process.exit(bug ? 1 : 0);
