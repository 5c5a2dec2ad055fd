// jax-js: negative values in an integer index array select the wrong element, and
// out-of-range ones are neither refused nor clamped.
//
// NumPy: for `x = [10, 20, 30]`, `x[np.array([-1])]` is `[30]` and `x[np.array([-3, -2])]`
// is `[10, 20]` (negative indices count from the end), and `x[np.array([3])]` raises
// IndexError; in `m = [[1, 2, 3], [4, 5, 6]]`, `m[:, [-1]]` is `[[3], [6]]`. JAX wraps
// negatives too (and clamps out-of-range gathers). jax-js 0.1.25's gather (`x.slice(idx)`,
// `np.take`, `np.takeAlongAxis`) uses the values as offsets unchecked: on a 1-D array every
// negative or out-of-range index reads element 0, and `m[:, [-1]]` reads `[[1], [3]]` (the
// flat offset row * 3 - 1, floored at 0). No error is raised at the call or at the read.
//
// Breaks LZ-NUM-013 (integer-array indexing with in-range negative values matches NumPy),
// LZ-NUM-016 (take_along_axis), LZ-ERR-007 (an index list known on the host is checked as
// NumPy checks it: IndexError).
// Seen on @jax-js/jax 0.1.25, Wasm backend, Node 20. Prints jax-js's and NumPy's values;
// exits 1 while the bug is there, 0 once fixed.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array { constructor() { throw new Error("no float16 in Node 20"); } };
}
const jax = await import(new URL("../../src/minilazy/conformance/adapters/js/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href);
const np = jax.numpy;

const x = () => np.array(new Float32Array([10, 20, 30]), { dtype: np.float32 });
const m = () => np.array(new Float32Array([1, 2, 3, 4, 5, 6]), { shape: [2, 3], dtype: np.float32 });
const idx = (...v) => np.array(new Int32Array(v), { dtype: np.int32 });
const cases = [
  ["x[[-1]]", () => x().slice(idx(-1)), [30]],
  ["x[[-3, -2]]", () => x().slice(idx(-3, -2)), [10, 20]],
  ["take(x, [-1])", () => np.take(x(), idx(-1), 0), [30]],
  ["m[:, [-1]]", () => m().slice([], idx(-1)), [3, 6]],
  ["take_along_axis(m, [[-1], [-1]], axis=1)", () => np.takeAlongAxis(m(), np.array(new Int32Array([-1, -1]), { shape: [2, 1], dtype: np.int32 }), 1), [3, 6]],
  ["x[[3]] (out of range)", () => x().slice(idx(3)), "IndexError"],
];
let bug = false;
for (const [what, f, want] of cases) {
  let got;
  try { got = JSON.stringify(Array.from(f().dataSync())); } catch (e) { got = `${e.constructor.name}: ${e.message}`; }
  const ok = want === "IndexError" ? !got.startsWith("[") : got === JSON.stringify(want);
  bug ||= !ok;
  console.log(`${what}: jax-js ${got}; NumPy ${want === "IndexError" ? "raises IndexError" : JSON.stringify(want)}${ok ? "" : "   <-- wrong"}`);
}
console.log(bug ? "BUG PRESENT" : "fixed");
process.exit(bug ? 1 : 0);
