// jax-js: `power` is exp(y * log(x)): 0 ** 0 is NaN, float64 powers have float32's accuracy and
// overflow at float32's range, and integer powers are refused.
//
// NumPy: `power(float32 [0, -2], [0, 0])` is `[1, 1]` (x ** 0 is 1 for every x),
// `power(float64 10, 65)` is 1e65 and `power(float64 2, 0.5)` is 1.4142135623730951 (correctly
// rounded to within an ulp), `power(int32 [2, 3], int32 [2, 2])` is int32 `[4, 9]`. jax-js
// 0.1.25 gives `[NaN, 1]` (0 ** 0 through log(0) = -inf), `inf`, 1.4142134189605713 (float32's
// accuracy in a float64 result), and for int32 operands raises `TypeError: Unsupported dtype for
// Log: int32`. The oracle met `pow(float64, int32)` giving inf, `x **= 0.0` giving NaN for x = 0,
// and every integer `pow`.
//
// Breaks LZ-NUM-001 (elementwise results within the op's tolerance, on every dtype NumPy
// accepts), LZ-LOW-002 (64-bit data computed in 64 bits), LZ-NUM-014 (x **= y).
// Seen on @jax-js/jax 0.1.25, Wasm backend, Node 20. Prints jax-js's and NumPy's answers;
// exits 1 while the bug is there, 0 once fixed.
if (typeof globalThis.Float16Array === "undefined") {
  globalThis.Float16Array = class Float16Array { constructor() { throw new Error("no float16 in Node 20"); } };
}
const jax = await import(new URL("../../src/minilazy/conformance/adapters/js/node_modules/@jax-js/jax/dist/index.js", import.meta.url).href);
const np = jax.numpy;

const arr = (T, dtype, ...v) => np.array(new T(v), { dtype });
const cases = [
  ["power(float32 [0, -2], float32 [0, 0])", () => np.power(arr(Float32Array, np.float32, 0, -2), arr(Float32Array, np.float32, 0, 0)), [1, 1]],
  ["power(float64 [10], float64 [65])", () => np.power(arr(Float64Array, np.float64, 10), arr(Float64Array, np.float64, 65)), [1e65]],
  ["power(float64 [2], float64 [0.5])", () => np.power(arr(Float64Array, np.float64, 2), arr(Float64Array, np.float64, 0.5)), [Math.SQRT2]],
  ["power(int32 [2, 3], int32 [2, 2])", () => np.power(arr(Int32Array, np.int32, 2, 3), arr(Int32Array, np.int32, 2, 2)), [4, 9]],
];
let bug = false;
for (const [what, f, want] of cases) {
  let got;
  try { got = Array.from(f().dataSync()); } catch (e) { got = `${e.constructor.name}: ${e.message}`; }
  // within 8 ulp of float64, as the oracle's "ulp" class asks
  const ok = Array.isArray(got) && got.every((g, i) => Math.abs(g - want[i]) <= 8 * Number.EPSILON * Math.abs(want[i]));
  bug ||= !ok;
  console.log(`${what}: jax-js ${Array.isArray(got) ? JSON.stringify(got.map(String)) : got}; NumPy ${JSON.stringify(want.map(String))}${ok ? "" : "   <-- wrong"}`);
}
console.log(bug ? "BUG PRESENT" : "fixed");
process.exit(bug ? 1 : 0);
