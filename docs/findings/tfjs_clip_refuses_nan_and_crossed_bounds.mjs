/*
TensorFlow.js: tf.clipByValue refuses a NaN bound and a lower bound above the upper one.

NumPy's clip (the Array API's clip) is minimum(maximum(x, min), max): a NaN bound gives NaN
(np.clip([1, 2], nan, inf) is [nan, nan]) and min > max gives max everywhere
(np.clip([1, 2], 3, 1) is [1, 1]). tf.clipByValue throws "Error in clip: min (NaN) must be less
than or equal to max (Infinity)" and "... min (3) must be less than or equal to max (1)".

Breaks LZ-NUM-003 (a Python scalar bound of clip is weak, and clip computes with it) and
LZ-NUM-001 (clip's values match the oracle).
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

check("clipByValue([1, 2], NaN, Infinity)", () => tf.clipByValue(f32([1, 2]), NaN, Infinity), { dtype: "float32", values: [NaN, NaN] });
check("clipByValue([1, 2], 3, 1)", () => tf.clipByValue(f32([1, 2]), 3, 1), { dtype: "float32", values: [1, 1] });

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
