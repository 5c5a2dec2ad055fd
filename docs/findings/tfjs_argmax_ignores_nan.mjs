/*
TensorFlow.js: tf.argMax and tf.argMin skip NaN.

NumPy's argmax and argmin return the index of the first NaN (NaN propagates, as it does through
max and min): np.argmax([-1, nan, 3]) is 1. TF.js compares with > and <, which NaN never
satisfies, so the NaN is never picked: tf.argMax gives 2 and tf.argMin of [1, nan, -3] gives 2.
tf.max and tf.min do propagate the NaN, so argMax no longer points at the maximum max reports.

Breaks LZ-NUM-010 (reductions, argmax and argmin included, match the oracle in value).
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

check("argMax([-1, nan, 3])", () => tf.argMax(f32([-1, NaN, 3])), { dtype: "int32", values: [1] });
check("argMin([1, nan, -3])", () => tf.argMin(f32([1, NaN, -3])), { dtype: "int32", values: [1] });
check("argMax([[-175342.875], [nan]], axis=0)", () => tf.argMax(f32([-175342.875, NaN], [2, 1]), 0), { values: [1] });
check("max([-1, nan, 3])", () => tf.max(f32([-1, NaN, 3])), { values: [NaN] });

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
