/*
TensorFlow.js: tf.cumsum with a negative axis returns a broken tensor, and an out-of-range axis
is not refused.

NumPy's cumsum (the Array API's cumulative_sum) counts a negative axis from the end:
np.cumsum([1, 2], axis=-1) is [1, 3]. tf.cumsum(x, -1) returns a tensor of shape [undefined] with
no data (reading or padding it fails later: tf.pad gives shape [NaN]); on a 2-D tensor, axis -3
gives shape [undefined, 2]. An axis past the last one (tf.cumsum(ones([2, 2]), 5)) is summed
along the last axis instead of raising (NumPy: AxisError). TensorFlow's own cumsum takes axes in
[-rank, rank) and refuses the rest.

Breaks LZ-NUM-016 (cumulative_sum along any axis matches the oracle), LZ-ERR-001 (an
out-of-range axis raises at the call) and LZ-CACHE-009 (whose test runs cumulative_sum with axis
-1, then -2).
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

check("cumsum([1, 2], axis=-1)", () => tf.cumsum(f32([1, 2]), -1), { dtype: "float32", shape: [2], values: [1, 3] });
check("cumsum(ones(2, 2), axis=-2)", () => tf.cumsum(tf.ones([2, 2]), -2), { shape: [2, 2], values: [1, 1, 2, 2] });
check("cumsum(ones(2, 2), axis=5)", () => tf.cumsum(tf.ones([2, 2]), 5), { error: "AxisError" });
check("cumsum(ones(2, 2), axis=-3)", () => tf.cumsum(tf.ones([2, 2]), -3), { error: "AxisError" });

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
