// The smallest useful adapter in JavaScript: TensorFlow.js's elementwise ops and sums, served
// over the oracle's process protocol (docs: "Checking an implementation in another language").
//   python -m minilazy.conformance --lazy-command "node minimal.mjs" --lazy-rules=LZ-NUM-001
// tfjs.mjs, next to it, is the complete adapter; this one is the worked example.
import * as tf from "@tensorflow/tfjs-core";
import "@tensorflow/tfjs-backend-cpu";
import { serve, DType, NdArray, PyFloat, PyError } from "./protocol.mjs";

tf.enableProdMode();
await tf.setBackend("cpu");

const UNARY = { negative: tf.neg, abs: tf.abs, exp: tf.exp, log: tf.log, sin: tf.sin, cos: tf.cos,
  tanh: tf.tanh, sqrt: tf.sqrt, floor: tf.floor, ceil: tf.ceil };
const BINARY = { add: tf.add, subtract: tf.sub, multiply: tf.mul, divide: tf.div,
  maximum: tf.maximum, minimum: tf.minimum };
const TYPED = { float32: Float32Array, int32: Int32Array, bool: Uint8Array };

// A Python scalar is weak (NumPy 2): it takes the tensor's dtype, unless a float meets ints.
const weak = (v, like) => v instanceof PyFloat ? "float32"
  : typeof v === "boolean" || like.dtype !== "bool" ? like.dtype : "int32";
const operand = (v, like) =>
  v instanceof tf.Tensor ? v : tf.scalar(v instanceof PyFloat ? v.value : v, weak(v, like));

serve({
  name: "tfjs-minimal", version: tf.version_core,
  capabilities: ["metadata"], methods: ["shape", "dtype"],
  ops: [...Object.keys(UNARY), ...Object.keys(BINARY), "sum"],
  dtype_policy: { dtypes: ["float32", "int32", "bool"], default_float: "float32",
    default_int: "int32", index: "int32", promotion: {}, unsupported: [] },

  from_numpy([a]) {
    if (!TYPED[a.dtype]) throw new PyError("TypeError", `tfjs has no ${a.dtype}`);
    return tf.tensor(a.dtype === "bool" ? Array.from(a.data, Boolean) : a.data, a.shape, a.dtype);
  },
  to_numpy([x]) { return new NdArray(x.dtype, x.shape, TYPED[x.dtype].from(x.dataSync())); },
  barrier() { return null; },  // eager: nothing is ever pending
  shape([x]) { return x.shape; },
  dtype([x]) { return new DType(x.dtype); },
  convert([x, kind]) {
    if (x.size !== 1) throw new PyError("TypeError", `only one-element tensors convert, not ${x.shape}`);
    const v = x.dataSync()[0];
    return kind === "bool" ? v !== 0 : kind === "float" || (kind === "item" && x.dtype === "float32")
      ? new PyFloat(v) : Math.trunc(v);
  },
  apply([op, x, y], kwargs) {
    if (op in UNARY) return UNARY[op](x);
    if (op in BINARY) return BINARY[op](operand(x, y), operand(y, x));
    if (op === "sum") return tf.sum(x, kwargs.axis ?? null, kwargs.keepdims ?? false);
    throw new PyError("NotImplementedError", op);
  },
  // tfjs throws plain Errors: the message says which of NumPy's kinds it is.
  errorKind(e) { return /broadcast|match the shape/.test(e.message) ? "ValueError" : undefined; },
});
