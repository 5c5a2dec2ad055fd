/*
TensorFlow.js: bad axes and windows are accepted, and the shape errors it does raise do not
name the shapes involved.

Accepted where NumPy raises at the call:
- repeated axes of a reduction, tf.sum(x, [0, 0]) or tf.sum(x, [1, -1]) (NumPy: ValueError
  "duplicate value in 'axis'"), and of tf.reverse (np.flip: ValueError);
- a repeated axis in tf.transpose's perm: tf.transpose([[1, 2], [3, 4]], [0, 0]) returns
  [[2, 0], [0, 4]], values from nowhere (np.transpose: ValueError "repeated axis in transpose");
- a pooling or convolution window larger than the input: tf.maxPool of a 5x5 input with a 6x6
  window, or tf.conv2d with a 6x3 filter, returns a tensor with a 0-sized axis (torch's
  max_pool2d and conv2d, the oracle's model: RuntimeError naming the sizes).
Raised without the operands' shapes, which the spec asks an error to name: tf.reshape of a
[2, 3] tensor to [4] says "Size(6) must match the product of shape 4"; tf.squeeze says "Can't
squeeze axis 0 since its dim '2' is not 1"; tf.matMul of [2, 3, 4] and [5, 4, 2] says "Operands
could not be broadcast together with shapes 2 and 5"; tf.transpose of a [2, 3, 4] tensor with
perm [1, 0] says "rank of input 3 must match length of perm 1,0".

Breaks LZ-ERR-001 (an op given incompatible shapes or out-of-range axes raises at the call,
naming the shapes involved).
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

const m = () => f32([1, 2, 3, 4, 5, 6], [2, 3]);
check("sum([2, 3] tensor, axis [0, 0])", () => tf.sum(m(), [0, 0]), { error: "ValueError" });
check("max([2, 3] tensor, axis [1, -1])", () => tf.max(m(), [1, -1]), { error: "ValueError" });
check("reverse([2, 3] tensor, axis [0, 0])", () => tf.reverse(m(), [0, 0]), { error: "ValueError" });
check("transpose([[1, 2], [3, 4]], [0, 0])", () => tf.transpose(f32([1, 2, 3, 4], [2, 2]), [0, 0]), { error: "ValueError" });
check("maxPool(ones [1, 5, 5, 3], 6x6 window)", () => tf.maxPool(tf.ones([1, 5, 5, 3]), 6, 6, "valid"), { error: "ValueError" });
check("conv2d(ones [1, 5, 5, 3], filter [6, 3, 3, 2])", () => tf.conv2d(tf.ones([1, 5, 5, 3]), tf.ones([6, 3, 3, 2]), 1, "valid"), { error: "ValueError" });
// Errors whose message must name the input's shape.
for (const [what, shape, fn] of [
  ["reshape [2, 3] to [4]", [2, 3], () => tf.reshape(tf.zeros([2, 3]), [4])],
  ["squeeze axis 0 of [2, 1]", [2, 1], () => tf.squeeze(tf.zeros([2, 1]), [0])],
  ["matMul [2, 3, 4] @ [5, 4, 2]", [2, 3, 4], () => tf.matMul(tf.zeros([2, 3, 4]), tf.zeros([5, 4, 2]))],
  ["transpose [2, 3, 4] by [1, 0]", [2, 3, 4], () => tf.transpose(tf.zeros([2, 3, 4]), [1, 0])],
]) {
  let message = "no error";
  try { fn(); } catch (e) { message = e.message; }
  const named = new RegExp(`(?<![\\d-])${shape.join("\\s*[,x]\\s*")}\\b`).test(message);
  wrong += !named;
  console.log(`${what}: TF.js says ${JSON.stringify(message)}; names (${shape})? ${named ? "yes" : "no   <-- wrong"}`);
}

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
