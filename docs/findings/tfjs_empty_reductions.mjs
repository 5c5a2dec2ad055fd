/*
TensorFlow.js: reductions over an empty axis give made-up values instead of NumPy's errors,
NaNs and identities.

NumPy refuses max, min, argmax and argmin of an empty axis (ValueError: "zero-size array to
reduction operation maximum which has no identity", "attempt to get argmax of an empty
sequence"). TF.js returns NaN for tf.max/tf.min and index 0 for tf.argMax/tf.argMin, an index
into nothing. The mean and the variance of no values are NaN in NumPy (with a RuntimeWarning);
TF.js gives 0 (tf.mean, tf.moments). And all() of no values is True (the empty AND), where
tf.all gives false.

Breaks LZ-ERR-001 (a reduction without identity over an empty axis raises at the call) and
LZ-NUM-010 (reductions match the oracle in value).
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

check("max(zeros([0]))", () => tf.max(tf.zeros([0])), { error: "ValueError" });
check("min(zeros([2, 0]), axis=1)", () => tf.min(tf.zeros([2, 0]), 1), { error: "ValueError" });
check("argMax(zeros([0, 3]), axis=0)", () => tf.argMax(tf.zeros([0, 3]), 0), { error: "ValueError" });
check("argMin(zeros([0]))", () => tf.argMin(tf.zeros([0])), { error: "ValueError" });
check("mean(zeros([0, 3]), axis=0)", () => tf.mean(tf.zeros([0, 3]), 0), { dtype: "float32", values: [NaN, NaN, NaN] });
check("moments(zeros([0, 3]), axis=0).variance", () => tf.moments(tf.zeros([0, 3]), 0).variance, { dtype: "float32", values: [NaN, NaN, NaN] });
check("all(bool [])", () => tf.all(bool([])), { dtype: "bool", values: [1] });
check("all(bool [2, 0], axis=1)", () => tf.all(bool([], [2, 0]), 1), { dtype: "bool", values: [1, 1] });
check("any(bool [2, 0], axis=1)", () => tf.any(bool([], [2, 0]), 1), { dtype: "bool", values: [0, 0] });

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
