// jax-js: subtracting a boolean array subtracts nothing (`x - b` is `x`), because
// `negative` of a boolean array is all False.
//
// NumPy: `float32 [1, 2] - bool [True, False]` is `[0, 2]` (True counts 1), and
// `np.negative(bool)` raises TypeError (no loop for bool). jax-js 0.1.25 computes `x - b` as
// `x + negative(b)`, and `negative` of a bool array is an all-False bool array, so `x - b`
// returns x unchanged, for every dtype of x. The oracle met it as `x - all(x, axis,
// keepdims=True)` (the softmax pattern) returning x, and as `negative(bool)` and
// `subtract(bool, bool)` raising no error.
//
// Breaks LZ-NUM-002 (mixed-dtype results), LZ-NUM-010 (a keepdims reduction read by an op of the
// same graph), LZ-ERR-002 (no loop: TypeError at the call).
// Seen on @jax-js/jax 0.1.25, Wasm backend, Node 20. Prints jax-js's and NumPy's values;
// exits 1 while the bug is there, 0 once fixed.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array { constructor() { throw new Error("no float16 in Node 20"); } };
}
const jax = await import(new URL("../../src/minilazy/conformance/adapters/js/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href);
const np = jax.numpy;

const bools = () => np.array(new Int32Array([1, 0]), { shape: [2], dtype: np.bool });
const cases = [
  ["float32 [1, 2] - bool [True, False]", () => np.subtract(np.array(new Float32Array([1, 2]), { dtype: np.float32 }), bools()), [0, 2]],
  ["int32 [5, 5] - bool [True, False]", () => np.subtract(np.array(new Int32Array([5, 5]), { dtype: np.int32 }), bools()), [4, 5]],
  ["x - all(x, axis=1, keepdims=True), x = float64 [[1, 2], [3, 4]]", () => {
    const x = np.array(new Float64Array([1, 2, 3, 4]), { shape: [2, 2], dtype: np.float64 });
    return np.subtract(x.ref, np.all(x, 1, { keepdims: true }));
  }, [0, 1, 2, 3]],
];
let bug = false;
for (const [what, f, want] of cases) {
  const got = Array.from(f().dataSync());
  const wrong = JSON.stringify(got) !== JSON.stringify(want);
  bug ||= wrong;
  console.log(`${what}: jax-js ${JSON.stringify(got)}, NumPy ${JSON.stringify(want)}${wrong ? "   <-- wrong" : ""}`);
}
try {
  const neg = np.negative(bools());
  console.log(`negative(bool [True, False]): jax-js ${neg.dtype} ${JSON.stringify(Array.from(neg.dataSync()))}, NumPy raises TypeError   <-- wrong`);
  bug = true;
} catch (e) {
  console.log(`negative(bool): jax-js raises ${e.constructor.name}: ${e.message}, NumPy raises TypeError`);
}
console.log(bug ? "BUG PRESENT" : "fixed");
process.exit(bug ? 1 : 0);
