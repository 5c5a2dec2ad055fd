/*
TensorFlow.js: tf.mod by an infinite divisor of the other sign gives NaN.

NumPy's remainder (Python's %) takes the divisor's sign: 5 % inf is 5, -5 % inf is inf,
5 % -inf is -inf, -5 % -inf is -5 (np.remainder agrees). tf.mod gives 5, NaN, NaN, -5: the
result of x - floor(x / y) * y when floor(x / y) is -1 and y is infinite. The oracle met it as
remainder(4.0932125e+16, -inf): NumPy -inf, TF.js NaN.

Breaks LZ-NUM-001 (every elementwise op's result equals the oracle's, NaN positions included).
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

check("mod([5, -5, 5, -5], [inf, inf, -inf, -inf])", () => tf.mod(f32([5, -5, 5, -5]), f32([Infinity, Infinity, -Infinity, -Infinity])),
  { dtype: "float32", values: [5, Infinity, -Infinity, -5] });
check("mod([4.0932125e16], [-inf])", () => tf.mod(f32([4.0932125e16]), f32([-Infinity])), { dtype: "float32", values: [-Infinity] });

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
