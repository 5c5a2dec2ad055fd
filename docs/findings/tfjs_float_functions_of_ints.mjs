/*
TensorFlow.js: float functions of int32 and bool tensors return int32 and bool, truncated.

NumPy computes asin, acos, atan, sinh, asinh, acosh, atanh, expm1, log1p and atan2 of integers
in floating point: np.expm1(np.int32([3])) is [19.085537] (float64; float32 under a float32
default), of bools in float16. TF.js keeps the input's dtype and truncates the float result:
tf.expm1(int32 [3]) is int32 [19], tf.atan(int32 [-2]) is int32 [-1], tf.atan2(int32 [1],
int32 [2]) is int32 [0], tf.acos(bool [false]) is bool holding 1. (tf.exp does it right: float32. sqrt, log, sin, cos, tan, cosh, tanh, floor and
ceil refuse int32 and bool by name, which is a documented limitation, not this bug.)
tf.round of bools returns bools (NumPy: float16 values).

Breaks LZ-NUM-001 (elementwise values match the oracle) and LZ-NUM-002 (result dtypes are
NumPy 2's, within the declared float32 default).
Seen on @tensorflow/tfjs-core 4.22.0 with @tensorflow/tfjs-backend-cpu 4.22.0, Node 20.
*/
import { createRequire } from "node:module";

const require = createRequire(new URL("../../src/minilazy/conformance/adapters/js/package.json", import.meta.url));
const tf = require("@tensorflow/tfjs-core");
require("@tensorflow/tfjs-backend-cpu");
tf.enableProdMode();
await tf.setBackend("cpu");

let wrong = 0;
const same = (a, b, rtol = 0) => a.length === b.length
  && a.every((v, i) => Object.is(v, b[i]) || Math.abs(v - b[i]) <= rtol * Math.abs(b[i]));
const text = (r) => ("error" in r ? `error (${r.error ?? "any"})`
  : `${r.dtype ?? ""}${r.shape ? `[${r.shape.map(String).join(", ")}]` : ""} ${JSON.stringify(r.values.map((v) => (Number.isFinite(v) ? v : String(v))))}`);
/** Run the TF.js call `fn`; compare with NumPy's answer: {dtype, shape, values, rtol}, or {error}. */
function check(what, fn, want) {
  let got;
  try {
    const t = fn();
    got = { dtype: t.dtype, shape: t.shape, values: Array.from(t.dataSync()) };
  } catch (e) {
    got = { error: e.message };
  }
  const ok = "error" in want ? "error" in got : !("error" in got) && same(got.values, want.values, want.rtol)
    && (want.dtype === undefined || got.dtype === want.dtype) && (want.shape === undefined || same(got.shape, want.shape));
  wrong += !ok;
  console.log(`${what}: TF.js ${text(got)}; NumPy ${text(want)}${ok ? "" : "   <-- wrong"}`);
}
const f32 = (values, shape = [values.length]) => tf.tensor(values, shape, "float32");
const i32 = (values, shape = [values.length]) => tf.tensor(values, shape, "int32");
const bool = (values, shape = [values.length]) => tf.tensor(values, shape, "bool");

const v = (x) => Math.fround(x);
check("expm1(int32 [3])", () => tf.expm1(i32([3])), { dtype: "float32", rtol: 1e-6, values: [v(Math.expm1(3))] });
check("log1p(int32 [3])", () => tf.log1p(i32([3])), { dtype: "float32", rtol: 1e-6, values: [v(Math.log1p(3))] });
check("atan(int32 [-2])", () => tf.atan(i32([-2])), { dtype: "float32", rtol: 1e-6, values: [v(Math.atan(-2))] });
check("asinh(int32 [2])", () => tf.asinh(i32([2])), { dtype: "float32", rtol: 1e-6, values: [v(Math.asinh(2))] });
check("acosh(int32 [2])", () => tf.acosh(i32([2])), { dtype: "float32", rtol: 1e-6, values: [v(Math.acosh(2))] });
check("sinh(int32 [1])", () => tf.sinh(i32([1])), { dtype: "float32", rtol: 1e-6, values: [v(Math.sinh(1))] });
check("asin(int32 [1])", () => tf.asin(i32([1])), { dtype: "float32", rtol: 1e-6, values: [v(Math.asin(1))] });
check("atan2(int32 [1], int32 [2])", () => tf.atan2(i32([1]), i32([2])), { dtype: "float32", rtol: 1e-6, values: [v(Math.atan2(1, 2))] });
check("acos(bool [false])  (NumPy: float16 1.57)", () => tf.acos(bool([false])), { dtype: "float32", rtol: 1e-6, values: [v(Math.acos(0))] });
check("exp(int32 [1])  (right)", () => tf.exp(i32([1])), { dtype: "float32", rtol: 1e-6, values: [v(Math.E)] });

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
