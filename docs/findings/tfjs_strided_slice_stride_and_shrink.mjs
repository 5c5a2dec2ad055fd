/*
TensorFlow.js: tf.stridedSlice with a step other than 1 on one axis and an integer index
(shrinkAxisMask) on another axis reads the wrong elements.

x = arange(16).reshape(4, 2, 2); NumPy's x[::2, :, 0] is [[0, 2], [8, 10]]. The same slice as
tf.stridedSlice(x, [0, 0, 0], [4, 2, 1], [2, 1, 1], 0, 0, 0, 0, 0b100) gives [[0, 1], [8, 9]]
(the elements of x[::2, 0, :]). Without the step (x[:, :, 0]) or without the shrink
(x[::2, :, 0:1]) the values are right, so the bug is in the combination. This is how TensorFlow
itself spells NumPy's basic indexing (strided_slice with shrink_axis_mask), and it makes
`x[key] = v` write to the wrong places too.

Breaks LZ-NUM-013 (basic indexing matches the oracle exactly) and LZ-NUM-014 (__setitem__).
Seen on @tensorflow/tfjs-core 4.22.0 with @tensorflow/tfjs-backend-cpu 4.22.0, Node 20.
*/
import { createRequire } from "node:module";

const require = createRequire(new URL("../../src/minilazy/conformance/adapters/js/package.json", import.meta.url));
const tf = require("@tensorflow/tfjs-core");
require("@tensorflow/tfjs-backend-cpu");
tf.enableProdMode();
await tf.setBackend("cpu");

const x = tf.reshape(tf.range(0, 16, 1, "int32"), [4, 2, 2]);
const CASES = [
  // [NumPy key, begin, end, strides, shrinkAxisMask, NumPy's answer]
  ["x[::2, :, 0]", [0, 0, 0], [4, 2, 1], [2, 1, 1], 0b100, [0, 2, 8, 10]],
  ["x[1::2, :, 1]", [1, 0, 1], [4, 2, 2], [2, 1, 1], 0b100, [5, 7, 13, 15]],
  ["x[:, :, 0]", [0, 0, 0], [4, 2, 1], [1, 1, 1], 0b100, [0, 2, 4, 6, 8, 10, 12, 14]],
];
let wrong = 0;
for (const [key, begin, end, strides, shrink, want] of CASES) {
  let got;
  try {
    got = Array.from(tf.stridedSlice(x, begin, end, strides, 0, 0, 0, 0, shrink).dataSync());
  } catch (e) {
    got = `error: ${e.message}`;
  }
  const bad = JSON.stringify(got) !== JSON.stringify(want);
  wrong += bad;
  console.log(`${key}: TF.js ${JSON.stringify(got)}, NumPy ${JSON.stringify(want)}${bad ? "   <-- wrong" : ""}`);
}
console.log(wrong ? "bug present" : "fixed");
process.exit(wrong ? 1 : 0);
