// jax-js: array creation from host values mishandles three cases: empty float data throws,
// numbers made into a bool array are truncated (0.5 is False, 2.5 is stored as 2), and
// `full`/`fullLike` with a boolean fill and a float dtype throw.
//
// NumPy: `np.asarray(np.zeros(0, np.float32))` and `np.zeros((2, 0))`-shaped data make empty
// arrays; `np.asarray([0.5, 2.5, -0.5], dtype=bool)` is `[True, True, True]` (nonzero is True);
// `np.full((2,), False, dtype=np.float32)` is `[0.0, 0.0]`. jax-js 0.1.25:
// `np.array(new Float32Array(0), { shape: [0] })` (float64 too; any shape with a 0) throws
// `TypeError: Expected a number for constant, got undefined: undefined` (empty int32, uint32 and
// bool data work, and so does `np.zeros([2, 0])`); `np.array([0.5, 2.5, -0.5], { dtype: np.bool })`
// gives `[False, 2, False]`, a "bool" holding 2 (`astype(bool)` of the same float32 array is
// right); `np.full([2], false, { dtype: np.float32 })` and `np.fullLike(floatArray, true)` throw
// `TypeError: Expected a number for constant, got boolean: ...` (an int32 dtype takes them).
// (The conformance adapter, jaxjs.mjs, makes empty inputs with np.zeros of their shape and dtype,
// so that the oracle checks what jax-js does with empty arrays.)
//
// Breaks LZ-NUM-015 (creation functions match the oracle in dtype and value, fill values and
// host data converted as NumPy converts them).
// Seen on @jax-js/jax 0.1.25, Wasm backend, Node 20. Prints jax-js's and NumPy's answers;
// exits 1 while the bug is there, 0 once fixed.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array { constructor() { throw new Error("no float16 in Node 20"); } };
}
const jax = await import(new URL("../../src/minilazy/conformance/adapters/js/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href);
const np = jax.numpy;

const cases = [
  ["np.array(Float32Array(0), {shape: [0]})", () => np.array(new Float32Array(0), { shape: [0], dtype: np.float32 }), "float32[0] []"],
  ["np.array(Float64Array(0), {shape: [2, 0]})", () => np.array(new Float64Array(0), { shape: [2, 0], dtype: np.float64 }), "float64[2,0] []"],
  ["np.array([0.5, 2.5, -0.5], {dtype: bool})", () => np.array([0.5, 2.5, -0.5], { dtype: np.bool }), "bool[3] [1,1,1]"],
  ["np.full([2], false, {dtype: float32})", () => np.full([2], false, { dtype: np.float32 }), "float32[2] [0,0]"],
  ["np.fullLike(float32 [1, 2], true)", () => np.fullLike(np.array(new Float32Array([1, 2]), { dtype: np.float32 }), true), "float32[2] [1,1]"],
];
let bug = false;
for (const [what, f, want] of cases) {
  let got;
  try {
    const y = f();
    got = `${y.dtype}${JSON.stringify(y.shape)} ${JSON.stringify(Array.from(y.dataSync(), Number))}`;
  } catch (e) { got = `${e.constructor.name}: ${e.message}`; }
  bug ||= got !== want;
  console.log(`${what}: jax-js ${got}; NumPy ${want}${got !== want ? "   <-- wrong" : ""}`);
}
console.log(bug ? "BUG PRESENT" : "fixed");
process.exit(bug ? 1 : 0);
