/*
TensorFlow.js: tf.concat of tensors of different dtypes takes the first tensor's dtype and
converts the others silently; tf.stack refuses them.

NumPy's concatenate (the Array API's concat) promotes: concat of int32 [1, 2] and float32
[0.5, 2.5] is float32 [1, 2, 0.5, 2.5]. tf.concat gives int32 [1, 2, 0, 2] (the floats
truncated), and with a bool first, bool holding [1, 2, 0] for bool [true] and float32 [2.5, 0.5].
The same call with the float tensor first is right, so the result depends on the order of the
operands. tf.stack of the same two tensors throws "All tensors passed to stack must have
matching dtypes" (NumPy: float32).

Breaks LZ-NUM-012 (concat and stack match the oracle exactly) and LZ-NUM-002 (result dtypes of
ops on tensors of different dtypes are NumPy 2's).
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

check("concat([int32 [1, 2], float32 [0.5, 2.5]])", () => tf.concat([i32([1, 2]), f32([0.5, 2.5])]), { dtype: "float32", values: [1, 2, 0.5, 2.5] });
check("concat([float32 [0.5, 2.5], int32 [1, 2]])", () => tf.concat([f32([0.5, 2.5]), i32([1, 2])]), { dtype: "float32", values: [0.5, 2.5, 1, 2] });
check("concat([bool [true], float32 [2.5, 0.5]])", () => tf.concat([bool([true]), f32([2.5, 0.5])]), { dtype: "float32", values: [1, 2.5, 0.5] });
check("stack([int32 [1, 2], float32 [0.5, 2.5]])", () => tf.stack([i32([1, 2]), f32([0.5, 2.5])]), { dtype: "float32", values: [1, 2, 0.5, 2.5] });

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
