/*
TensorFlow.js: three shape functions fail on tensors with a zero-sized axis.

- tf.broadcastTo(ones([1, 3]), [0, 3]) returns shape [1, 3]: a size-1 axis is not broadcast to
  size 0 (NumPy: np.broadcast_to(np.ones((1, 3)), (0, 3)).shape == (0, 3)). x[key] = v with an
  empty selection then fails too (tensorScatterUpdate gets updates of the wrong shape).
- tf.gatherND(params, indices) with params of shape [3, 0] and indices [[1]] throws "Requested
  more than 0 entries, but input is empty", where the result is simply empty (NumPy: x[[1]] of a
  (3, 0) array has shape (1, 0)). Integer-array indexing of such tensors fails with it.
- tf.linalg.bandPart of a stack of empty matrices (shape [0, 0] or [2, 0, 3]) throws "Cannot
  infer the missing size in [-1,0,0] when there are 0 elements" (NumPy: np.tril/np.triu return
  the empty array).

Breaks LZ-NUM-012 (broadcast_to), LZ-NUM-013 and LZ-NUM-014 (indexing, __setitem__), LZ-NUM-016
(tril and triu).
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

check("broadcastTo(ones([1, 3]), [0, 3])", () => tf.broadcastTo(tf.ones([1, 3]), [0, 3]), { shape: [0, 3], values: [] });
check("broadcastTo(scalar(1), [2, 0])", () => tf.broadcastTo(tf.scalar(1), [2, 0]), { shape: [2, 0], values: [] });
check("gatherND(zeros([3, 0]), [[1]])", () => tf.gatherND(tf.zeros([3, 0]), i32([1], [1, 1])), { shape: [1, 0], values: [] });
check("bandPart(zeros([0, 0]), -1, 0)", () => tf.linalg.bandPart(tf.zeros([0, 0]), -1, 0), { shape: [0, 0], values: [] });
check("bandPart(zeros([2, 0, 3]), 0, -1)", () => tf.linalg.bandPart(tf.zeros([2, 0, 3]), 0, -1), { shape: [2, 0, 3], values: [] });

console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
