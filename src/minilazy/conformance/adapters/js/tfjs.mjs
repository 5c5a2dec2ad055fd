// TensorFlow.js (@tensorflow/tfjs-core with the pure-JS CPU backend) as an implementation under
// test, served over the oracle's process protocol (spec/protocol.md):
//
//     python -m minilazy.conformance --lazy-command "node src/minilazy/conformance/adapters/js/tfjs.mjs"
//
// TF.js is eager: every op runs when it is called, so the barrier and `sync` do nothing and no
// laziness capability (counters, keys, pending, ir) is declared. Shapes and dtypes are plain
// fields of a tf.Tensor (`metadata`). Tensors live in a mutable Box, so that `x[key] = v` and
// `x op= y` can rebind the tensor a handle stands for (`setitem`); the rebinding is TF.js's own
// in-place update, `tf.Variable.assign`, which keeps the dtype and shape or throws.
//
// The adapter translates spelling only: the Array API's names and keywords to TF.js's functional
// API (tf.add, tf.sum(x, axis, keepDims)...), NumPy's indexing keys to tf.stridedSlice and
// tf.gatherND. Where TF.js takes an argument in another form it is reshaped on the way in (a 1-D
// matmul operand gets an axis and loses it again, argmax over all axes reads the tensor flattened,
// negative index values wrap into [0, n) on the device, as tf.experimental.numpy does), but a
// result is never cast, a dtype never picked, an op never computed on the host. JS numbers
// (Python's ints and floats alike: JS has no ints) reach TF.js as numbers, which it makes float32
// tensors. Ops TF.js has no function for are left out of `ops` (listed above SUPPORTED).

import * as tf from "@tensorflow/tfjs-core";
import "@tensorflow/tfjs-backend-cpu";
import { DType, ELLIPSIS, NdArray, PyError, PyFloat, Slice, Tuple, serve } from "./protocol.mjs";

tf.enableProdMode();  // no NaN checks or debug logging: the library as shipped
await tf.setBackend("cpu");

// TF.js's dtypes (complex64 exists only through tf.complex and few kernels take it: left out).
const DTYPES = ["float32", "int32", "bool"];
const TYPED = { float32: Float32Array, int32: Int32Array, bool: Uint8Array };

// A handle's object: the tensor it stands for now (replaced when the program writes into it).
class Box { constructor(t) { this.t = t; } }
// Variables made for in-place updates are registered with the engine until disposed: dispose
// each once its Box is gone (the protocol drops a handle without telling the adapter).
const variables = new FinalizationRegistry((v) => v.dispose());

/** `x op= y` and `x[key] = v` in TF.js: Variable.assign of the new value (same dtype and shape). */
function rebind(box, value) {
  if (!(box.t instanceof tf.Variable)) {
    box.t = tf.variable(box.t, false);
    variables.register(box, box.t);
  }
  box.t.assign(value);
  return box;
}

const isTensor = (v) => v instanceof tf.Tensor;
/** An argument as TF.js takes it: a tensor for a handle, a number for a Python float. */
function arg(v) {
  if (v instanceof Box) return v.t;
  if (v instanceof PyFloat) return v.value;
  if (v instanceof NdArray) return fromNumpy(v);  // a NumPy scalar
  if (v instanceof DType) return v.name;
  if (Array.isArray(v)) return v.map(arg);  // Tuple becomes a plain array: TF.js's shapes, axes
  return v;
}
const wrap = (r) => (isTensor(r) ? new Box(r) : Array.isArray(r) ? Tuple.from(r.map(wrap)) : r);

function fromNumpy(a) {
  if (!DTYPES.includes(a.dtype)) throw new PyError("TypeError", `TF.js has no dtype ${a.dtype}`);
  return tf.tensor(a.data, a.shape, a.dtype);
}

/** An axis argument: null for all axes, else an array of ints (TF.js's number[]). */
const axes = (axis) => (axis === null || axis === undefined ? null : typeof axis === "number" ? [axis] : [...axis]);
const range = (n) => Array.from({ length: n }, (_, i) => i);

// -- indexing: NumPy's keys as tf.stridedSlice (basic items) and tf.gatherND (index arrays) ----

/** The key's items, each classified; index lists become int32 tensors (TF.js's index dtype). */
function keyItems(key, ndim) {
  const raw = key instanceof Tuple ? [...key] : [key];
  const items = raw.map((k) => {
    if (k === null) return { kind: "none" };
    if (k === ELLIPSIS) return { kind: "ellipsis" };
    if (k instanceof Slice) {
      const [start, stop, step] = [k.start, k.stop, k.step].map(arg);
      for (const b of [start, stop, step]) {
        if (b !== null && !Number.isInteger(b)) {
          throw new PyError("TypeError", "slice indices must be integers or None or have an __index__ method");
        }
      }
      if (step === 0) throw new PyError("ValueError", "slice step cannot be zero");
      return { kind: "slice", start, stop, step: step ?? 1 };
    }
    if (typeof k === "number" && Number.isInteger(k)) return { kind: "int", value: k };
    if (k instanceof Box || Array.isArray(k)) {
      const t = k instanceof Box ? k.t : listIndex(k);
      if (t.dtype !== "int32") {  // NumPy's rule for the key; TF.js would say "must be int32"
        throw new PyError("IndexError", "arrays used as indices must be of integer (or boolean) type");
      }
      return { kind: "array", t };
    }
    throw new PyError("IndexError", "only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) " +
      "and integer or boolean arrays are valid indices");
  });
  if (items.filter((i) => i.kind === "ellipsis").length > 1) {
    throw new PyError("IndexError", "an index can only have a single ellipsis ('...')");
  }
  const used = items.filter((i) => ["int", "slice", "array"].includes(i.kind)).length;
  if (used > ndim) {
    throw new PyError("IndexError", `too many indices for array: array is ${ndim}-dimensional, but ${used} were indexed`);
  }
  return items;
}

/** A host list of ints as an int32 tensor (a nested list keeps its shape). */
function listIndex(list) {
  const flat = list.flat(Infinity);
  if (!flat.every((v) => Number.isInteger(v) && typeof v === "number")) {
    throw new PyError("IndexError", "arrays used as indices must be of integer (or boolean) type");
  }
  return tf.tensor(list.length ? list : [], list.length ? undefined : [0], "int32");
}

/** `x[key]` for NumPy's keys: basic items, then index arrays (with ints among them) by gatherND. */
function getitem(x, key) {
  const items = keyItems(key, x.rank);
  const used = items.filter((i) => ["int", "slice", "array"].includes(i.kind)).length;
  // The ellipsis (or the end of the key) stands for full slices of the axes no item names.
  const at = items.findIndex((i) => i.kind === "ellipsis");
  const full = () => ({ kind: "slice", start: null, stop: null, step: 1 });
  const fill = Array.from({ length: x.rank - used }, full);
  const expanded = at < 0 ? [...items, ...fill] : [...items.slice(0, at), ...fill, ...items.slice(at + 1)];
  const advanced = items.some((i) => i.kind === "array");
  // Basic part: one stridedSlice; with index arrays, their axes (and ints') are kept whole.
  const begin = [], end = [], strides = [];
  let beginMask = 0, endMask = 0, newAxisMask = 0, shrinkMask = 0;
  expanded.forEach((item, j) => {
    const bit = 1 << j;
    if (item.kind === "none") {
      newAxisMask |= bit; begin.push(0); end.push(1); strides.push(1);
    } else if (item.kind === "int" && !advanced) {
      shrinkMask |= bit; begin.push(item.value); end.push(item.value + 1); strides.push(1);
    } else if (item.kind === "slice") {
      if (item.start === null) beginMask |= bit;
      if (item.stop === null) endMask |= bit;
      begin.push(item.start ?? 0); end.push(item.stop ?? 0); strides.push(item.step);
    } else {  // an int or an array among index arrays: the whole axis, for gatherND
      beginMask |= bit; endMask |= bit; begin.push(0); end.push(0); strides.push(1);
    }
  });
  const y = expanded.length
    ? tf.stridedSlice(x, begin, end, strides, beginMask, endMask, 0, newAxisMask, shrinkMask)
    : x;
  if (!advanced) return y;
  // Index arrays: ints are 0-d index arrays among them (NumPy); all broadcast together.
  const picks = [];
  expanded.forEach((item, j) => {
    if (item.kind === "int" || item.kind === "array") {
      const n = y.shape[j];
      const t = item.kind === "int" ? tf.scalar(item.value, "int32") : item.t;
      // gatherND takes indices in [0, n): NumPy's negative ones wrap (on the device).
      picks.push({ axis: j, t: tf.where(tf.less(t, 0), tf.add(t, tf.scalar(n, "int32")), t) });
    }
  });
  const shape = broadcastShapes(picks.map((p) => p.t.shape), "IndexError",
    "shape mismatch: indexing arrays could not be broadcast together with shapes");
  const index = tf.stack(picks.map((p) => tf.broadcastTo(p.t, shape)), -1);
  const rest = range(y.rank).filter((a) => !picks.some((p) => p.axis === a));
  const moved = tf.transpose(y, [...picks.map((p) => p.axis), ...rest]);
  const out = tf.gatherND(moved, index);
  // Index arrays next to each other in the key put their axes where they stand; else first.
  const positions = items.map((i, n) => (i.kind === "int" || i.kind === "array" ? n : -1)).filter((n) => n >= 0);
  const adjacent = positions.every((p, n) => n === 0 || p === positions[n - 1] + 1);
  const first = picks[0].axis;
  if (!adjacent || first === 0) return out;
  const b = shape.length;
  const perm = [...range(first).map((a) => a + b), ...range(b), ...range(out.rank - b - first).map((a) => a + b + first)];
  return tf.transpose(out, perm);
}

function broadcastShapes(shapes, kind, message) {
  const rank = Math.max(0, ...shapes.map((s) => s.length));
  const out = [];
  for (let i = 0; i < rank; i++) {
    let n = 1;
    for (const s of shapes) {
      const d = s[s.length - rank + i] ?? 1;
      if (d !== 1 && n !== 1 && d !== n) throw new PyError(kind, `${message} ${shapes.map((s) => `(${s})`).join(" ")}`);
      if (d !== 1) n = d;
    }
    out.push(n);
  }
  return out;
}

/** `x[key] = v`: the positions x[key] selects (an index tensor) updated by tensorScatterUpdate. */
function setitem(box, key, value) {
  const x = box.t;
  const items = keyItems(key, x.rank);
  let v = isTensor(value) ? value : tf.scalar(value);
  // NumPy's single-element assignment takes no value with dimensions.
  if (v.rank > 0 && items.length === x.rank && items.every((i) => i.kind === "int")) {
    throw new PyError("ValueError", "setting an array element with a sequence.");
  }
  const where = getitem(tf.reshape(tf.range(0, x.size, 1, "int32"), x.shape), key);
  // NumPy drops a value's leading 1-sized axes beyond the target's, then broadcasts it.
  while (v.rank > where.rank && v.shape[0] === 1) v = tf.squeeze(v, [0]);
  // NumPy casts the value to x's dtype; tensorScatterUpdate takes updates of that dtype only.
  const updates = tf.broadcastTo(tf.cast(v, x.dtype), where.shape);
  const flat = tf.tensorScatterUpdate(tf.reshape(x, [-1]), tf.reshape(where, [-1, 1]), tf.reshape(updates, [-1]));
  return rebind(box, tf.reshape(flat, x.shape));
}

// -- the ops --------------------------------------------------------------------------------------

// The Array API name -> TF.js function, where only the name differs.
const SAME = {
  negative: "neg", abs: "abs", sign: "sign", sqrt: "sqrt", square: "square", exp: "exp",
  expm1: "expm1", log: "log", log1p: "log1p", sin: "sin", cos: "cos", tan: "tan", asin: "asin",
  acos: "acos", atan: "atan", sinh: "sinh", cosh: "cosh", tanh: "tanh", asinh: "asinh",
  acosh: "acosh", atanh: "atanh", floor: "floor", ceil: "ceil", round: "round",
  logical_not: "logicalNot", isnan: "isNaN", isinf: "isInf", isfinite: "isFinite",
  add: "add", subtract: "sub", multiply: "mul", divide: "div", floor_divide: "floorDiv",
  remainder: "mod", pow: "pow", maximum: "maximum", minimum: "minimum", atan2: "atan2",
  equal: "equal", not_equal: "notEqual", less: "less", less_equal: "lessEqual",
  greater: "greater", greater_equal: "greaterEqual", logical_and: "logicalAnd",
  logical_or: "logicalOr", logical_xor: "logicalXor",
  where: "where",
};

/** tril/triu by tf.linalg.bandPart: keep j - i <= k (tril) or j - i >= k (triu). */
function triangle(x, k, lower) {
  const [m, n] = x.shape.slice(-2);
  const band = (lo, hi) => tf.linalg.bandPart(x, Math.min(lo, m - 1), Math.min(hi, n - 1));
  // One band when it touches the main diagonal; else the band's complement, as a mask.
  if (lower && k >= 0) return band(-1, k);
  if (!lower && k <= 0) return band(-k, -1);
  const ones = tf.ones([m, n], "int32");
  const out = lower ? tf.linalg.bandPart(ones, Math.min(-k - 1, m - 1), -1)
    : tf.linalg.bandPart(ones, -1, Math.min(k - 1, n - 1));
  return tf.where(tf.cast(out, "bool"), tf.zerosLike(x), x);
}

/** The correction-scaled variance of tf.moments (which gives the population variance). */
function variance(x, axis, correction, keepdims) {
  const { variance: v } = tf.moments(x, axes(axis), keepdims);
  const c = correction instanceof PyFloat ? correction.value : correction;
  if (c === 0) return v;
  const n = (axes(axis) ?? range(x.rank)).reduce((p, a) => p * x.shape[a < 0 ? a + x.rank : a], 1);
  return tf.mul(v, tf.scalar(n / (n - c)));
}

/** matmul with NumPy's 1-D operands: a 1 put in front of (or after) the vector, then removed. */
function matmul(a, b) {
  const a2 = a.rank === 1 ? tf.expandDims(a, 0) : a, b2 = b.rank === 1 ? tf.expandDims(b, 1) : b;
  let out = tf.matMul(a2, b2);
  if (b.rank === 1) out = tf.squeeze(out, [-1]);
  if (a.rank === 1) out = tf.squeeze(out, [b.rank === 1 ? -1 : -2]);
  return out;
}

/** tensordot as the einsum it is (TF.js has einsum for two operands, no repeated letters). */
function tensordot(a, b, ax = 2) {
  const [ia, ib] = typeof ax === "number"
    ? [range(ax).map((i) => a.rank - ax + i), range(ax)]
    : ax.map((s) => (typeof s === "number" ? [s] : [...s]));
  // The axes name letters of the einsum: NumPy's checks of them (einsum sees only letters).
  if (ia.length !== ib.length) throw new PyError("ValueError", "shape-mismatch for sum");
  const norm = (i, rank) => {
    if (i < -rank || i >= rank) throw new PyError("IndexError", "tuple index out of range");
    return i < 0 ? i + rank : i;
  };
  const letters = "abcdefghijklmnopqrstuvwxyz";
  const sa = range(a.rank).map((i) => letters[i]);
  const sb = range(b.rank).map((i) => letters[a.rank + i]);
  ib.forEach((j, n) => { sb[norm(j, b.rank)] = sa[norm(ia[n], a.rank)]; });
  const contracted = new Set(ia.map((i) => sa[norm(i, a.rank)]));
  const out = [...sa, ...sb].filter((c) => !contracted.has(c)).join("");
  return tf.einsum(`${sa.join("")},${sb.join("")}->${out}`, a, b);
}

/** bitwiseAnd takes operands of one shape only: NumPy's broadcasting first (shapes only). */
function bitwiseAnd(x1, x2) {
  if (!isTensor(x1) || !isTensor(x2)) return tf.bitwiseAnd(x1, x2);  // TF.js's refusal of numbers
  const shape = broadcastShapes([x1.shape, x2.shape], "ValueError", "operands could not be broadcast together with shapes");
  return tf.bitwiseAnd(tf.broadcastTo(x1, shape), tf.broadcastTo(x2, shape));
}

// Each op takes its arguments by the Array API's parameter names (bound by `bind` below).
const OPS = {
  ...Object.fromEntries(Object.entries(SAME).map(([op, fn]) => [op, (p) => tf[fn](...Object.values(p))])),
  astype: ({ x, dtype }) => tf.cast(x, dtype),
  bitwise_and: ({ x1, x2 }) => bitwiseAnd(x1, x2),
  // clipByValue takes numbers; a missing bound is no bound; tensor bounds: the Array API's max/min.
  clip: ({ x, min = null, max = null }) => (isTensor(min) || isTensor(max)
    ? [[min, tf.maximum], [max, tf.minimum]].reduce((y, [b, f]) => (b === null ? y : f(y, b)), x)
    : tf.clipByValue(x, min ?? -Infinity, max ?? Infinity)),
  sum: ({ x, axis = null, dtype = null, keepdims = false }) => tf.sum(dtype ? tf.cast(x, dtype) : x, axes(axis), keepdims),
  prod: ({ x, axis = null, dtype = null, keepdims = false }) => tf.prod(dtype ? tf.cast(x, dtype) : x, axes(axis), keepdims),
  mean: ({ x, axis = null, keepdims = false }) => tf.mean(x, axes(axis), keepdims),
  max: ({ x, axis = null, keepdims = false }) => tf.max(x, axes(axis), keepdims),
  min: ({ x, axis = null, keepdims = false }) => tf.min(x, axes(axis), keepdims),
  any: ({ x, axis = null, keepdims = false }) => tf.any(x, axes(axis), keepdims),
  all: ({ x, axis = null, keepdims = false }) => tf.all(x, axes(axis), keepdims),
  var: ({ x, axis = null, correction = 0, keepdims = false }) => variance(x, axis, correction, keepdims),
  std: ({ x, axis = null, correction = 0, keepdims = false }) => tf.sqrt(variance(x, axis, correction, keepdims)),
  // argMax takes one axis (default 0) and no keepDims: axis None reads x flattened.
  argmax: ({ x, axis = null, keepdims = false }) => argBest(tf.argMax, x, axis, keepdims),
  argmin: ({ x, axis = null, keepdims = false }) => argBest(tf.argMin, x, axis, keepdims),
  cumulative_sum: ({ x, axis = null, dtype = null, include_initial = false }) => {
    const a = axis ?? 0;  // axis None: x is 1-D (the Array API)
    const y = tf.cumsum(dtype ? tf.cast(x, dtype) : x, a);
    if (!include_initial) return y;
    return tf.pad(y, range(y.rank).map((i) => (i === (a < 0 ? a + y.rank : a) ? [1, 0] : [0, 0])));
  },
  matmul: ({ x1, x2 }) => matmul(x1, x2),
  tensordot: ({ x1, x2, axes: ax = 2 }) => tensordot(x1, x2, ax),
  reshape: ({ x, shape }) => tf.reshape(x, shapeOf(shape)),
  permute_dims: ({ x, axes: perm }) => tf.transpose(x, perm),
  expand_dims: ({ x, axis = 0 }) => tf.expandDims(x, axis),
  squeeze: ({ x, axis }) => tf.squeeze(x, axes(axis)),
  broadcast_to: ({ x, shape }) => tf.broadcastTo(x, shapeOf(shape)),
  flip: ({ x, axis = null }) => tf.reverse(x, axes(axis) ?? undefined),
  matrix_transpose: ({ x }) => {
    if (x.rank < 2) throw new PyError("ValueError", `matrix_transpose needs 2 dimensions or more, got shape (${x.shape})`);
    return tf.transpose(x, [...range(x.rank - 2), x.rank - 1, x.rank - 2]);
  },
  tril: ({ x, k = 0 }) => triangle(x, k, true),
  triu: ({ x, k = 0 }) => triangle(x, k, false),
  concat: ({ arrays, axis = 0 }) =>
    (axis === null ? tf.concat(arrays.map((a) => tf.reshape(a, [-1])), 0) : tf.concat(arrays, axis)),
  stack: ({ arrays, axis = 0 }) => tf.stack(arrays, axis),
  take: ({ x, indices, axis = null }) => {
    const src = axis === null ? tf.reshape(x, [-1]) : x;
    const a = axis ?? 0, n = src.shape[a < 0 ? a + src.rank : a] ?? 0;
    // gather takes indices in [0, n): NumPy's negative ones wrap first (on the device).
    const idx = indices.dtype === "int32" ? tf.where(tf.less(indices, 0), tf.add(indices, tf.scalar(n, "int32")), indices) : indices;
    return tf.gather(src, idx, a);
  },
  getitem: ({ x, key }) => getitem(x, key),
  searchsorted: ({ x1, x2, side = "left", sorter = null }) => {
    // TF.js searches rows of a batch: one row of x1, x2's values flattened into one row.
    const seq = sorter ? tf.gather(x1, sorter) : x1;
    return tf.reshape(tf.searchSorted(tf.reshape(seq, [1, -1]), tf.reshape(x2, [1, -1]), side), x2.shape);
  },
  // Creation: TF.js's own defaults where no dtype is named (float32 for every JS number).
  asarray: ({ obj, dtype = null }) =>
    (isTensor(obj) ? (dtype ? tf.cast(obj, dtype) : tf.clone(obj)) : tf.tensor(obj, undefined, dtype ?? undefined)),
  zeros: ({ shape, dtype = null }) => tf.zeros(shapeOf(shape), dtype ?? undefined),
  ones: ({ shape, dtype = null }) => tf.ones(shapeOf(shape), dtype ?? undefined),
  full: ({ shape, fill_value, dtype = null }) => tf.fill(shapeOf(shape), fill_value, dtype ?? undefined),
  zeros_like: ({ x, dtype = null }) => (dtype ? tf.zeros(x.shape, dtype) : tf.zerosLike(x)),
  ones_like: ({ x, dtype = null }) => (dtype ? tf.ones(x.shape, dtype) : tf.onesLike(x)),
  full_like: ({ x, fill_value, dtype = null }) => tf.fill(x.shape, fill_value, dtype ?? x.dtype),
  eye: ({ n_rows: n, n_cols = null, k = 0, dtype = null }) => {
    const m = n_cols ?? n, d = dtype ?? undefined;
    // tf.eye has no diagonal offset: a larger identity, cut (as the tinygrad adapter does).
    if (k >= 0) return tf.slice(tf.eye(n + k, m, undefined, d), [k, 0], [n, m]);
    return tf.slice(tf.eye(n, m - k, undefined, d), [0, -k], [n, m]);
  },
  arange: ({ start, stop = null, step = 1, dtype = null }) =>
    (stop === null ? tf.range(0, start, step, dtype ?? undefined) : tf.range(start, stop, step, dtype ?? undefined)),
  linspace: ({ start, stop, num, dtype = null, endpoint = true }) => {
    // No endpoint: the same step, (stop - start) / num: num + 1 points less the last.
    const y = endpoint ? tf.linspace(start, stop, num) : tf.slice(tf.linspace(start, stop, num + 1), [0], [num]);
    return dtype ? tf.cast(y, dtype) : y;
  },
};
// The Array API's parameter names, in order (ops.toml's signatures; elementwise: x or x1, x2).
const PARAMS = {
  where: "condition x1 x2", clip: "x min max", astype: "x dtype copy",
  sum: "x axis dtype keepdims", prod: "x axis dtype keepdims", var: "x axis correction keepdims",
  std: "x axis correction keepdims", cumulative_sum: "x axis dtype include_initial",
  matmul: "x1 x2", tensordot: "x1 x2 axes", reshape: "x shape copy", permute_dims: "x axes",
  squeeze: "x axis", broadcast_to: "x shape", concat: "arrays axis", stack: "arrays axis",
  take: "x indices axis", getitem: "x key", searchsorted: "x1 x2 side sorter",
  asarray: "obj dtype device copy", zeros: "shape dtype device", ones: "shape dtype device",
  full: "shape fill_value dtype device", eye: "n_rows n_cols k dtype device",
  arange: "start stop step dtype device", linspace: "start stop num dtype device endpoint",
  zeros_like: "x dtype device", ones_like: "x dtype device", full_like: "x fill_value dtype device",
};
const BINARY = new Set(["add", "subtract", "multiply", "divide", "floor_divide", "remainder", "pow",
  "maximum", "minimum", "atan2", "equal", "not_equal", "less", "less_equal", "greater",
  "greater_equal", "logical_and", "logical_or", "logical_xor", "bitwise_and"]);
const REDUCE = new Set(["mean", "max", "min", "any", "all", "argmax", "argmin"]);

/** The call's arguments by parameter name; `device` (one device) and `copy` (no views) dropped. */
function bind(op, args, kwargs) {
  const names = (PARAMS[op] ?? (BINARY.has(op) ? "x1 x2" : REDUCE.has(op) ? "x axis keepdims"
    : ["expand_dims", "flip"].includes(op) ? "x axis" : ["tril", "triu"].includes(op) ? "x k" : "x")).split(" ");
  if (args.length > names.length) throw new PyError("TypeError", `${op}() takes ${names.length} arguments, ${args.length} given`);
  const p = {};
  args.forEach((v, i) => { p[names[i]] = v; });
  for (const [k, v] of Object.entries(kwargs)) {
    if (!names.includes(k) || k in p) throw new PyError("TypeError", `${op}() got an unexpected keyword argument '${k}'`);
    p[k] = v;
  }
  delete p.device; delete p.copy;
  // Positional TF.js calls (SAME) take the values in order: keep the parameters' order.
  return Object.fromEntries(names.filter((n) => n in p).map((n) => [n, p[n]]));
}

const shapeOf = (shape) => (typeof shape === "number" ? [shape] : shape);

function argBest(fn, x, axis, keepdims) {
  if (axis === null) {
    const out = fn(tf.reshape(x, [-1]), 0);
    return keepdims ? tf.reshape(out, x.shape.map(() => 1)) : out;
  }
  const out = fn(x, axis);
  return keepdims ? tf.expandDims(out, axis < 0 ? axis + x.rank : axis) : out;
}

// -- convolution and pooling (capability conv): torch's (N, C, H, W) as TF.js's (N, H, W, C) --------

const pair = (v) => (typeof v === "number" ? [v, v] : [...v]);
const nhwc = (x) => tf.transpose(x, [0, 2, 3, 1]);
const nchw = (y) => tf.transpose(y, [0, 3, 1, 2]);
/** TF.js names the shapes it was given, in its own layout: the caller's are added to its message. */
function named(what, shapes, fn) {
  try {
    return fn();
  } catch (e) {
    if (e instanceof PyError) throw e;
    throw new PyError(errorKind(e), `${e.message} (${what} of ${shapes.map((s) => `(${s.join(", ")})`).join(" and ")})`);
  }
}

/** tf.conv2d on NHWC with HWIO filters; groups as one convolution per group, concatenated. */
function conv2d([x, w, b = null], { stride = 1, padding = 0, dilation = 1, groups = 1 }) {
  const [X, W, B] = [x, w, b].map(arg);
  return new Box(named("conv2d", [X.shape, W.shape], () => {
    const [ph, pw] = pair(padding);
    const pad = [[0, 0], [ph, ph], [pw, pw], [0, 0]];  // zero padding, explicit
    const xs = tf.split(nhwc(X), groups, 3), ws = tf.split(tf.transpose(W, [2, 3, 1, 0]), groups, 3);
    const parts = xs.map((xi, g) => tf.conv2d(xi, ws[g], pair(stride), pad, "NHWC", pair(dilation)));
    const y = groups === 1 ? parts[0] : tf.concat(parts, 3);
    return nchw(B ? tf.add(y, B) : y);
  }));
}

/** tf.maxPool skips padded positions, which is torch's -inf padding. */
function max_pool2d([x, kernel, stride = null, padding = 0]) {
  const X = arg(x), [ph, pw] = pair(padding);
  return new Box(named("max_pool2d", [X.shape], () => nchw(tf.maxPool(nhwc(X), pair(kernel),
    pair(stride ?? kernel), [[0, 0], [ph, ph], [pw, pw], [0, 0]]))));
}

/** torch counts padded zeros in the mean (tf.avgPool leaves padding out): zeros padded first. */
function avg_pool2d([x, kernel, stride = null, padding = 0]) {
  const X = arg(x), [ph, pw] = pair(padding);
  return new Box(named("avg_pool2d", [X.shape], () => nchw(tf.avgPool(
    tf.pad(nhwc(X), [[0, 0], [ph, ph], [pw, pw], [0, 0]]), pair(kernel), pair(stride ?? kernel), "valid"))));
}

// Registry ops TF.js has no function for (left out, not composed on the host):
//   log2, log10, trunc, bitwise_invert, bitwise_or, bitwise_xor, bitwise shifts: no TF.js op;
//   real, imag, conj: complex64 is not carried (TF.js builds it only through tf.complex);
//   take_along_axis: no gather along one axis with indices broadcast against x;
//   nonzero, unique_*: shapes that depend on data (whereAsync, no capability dynamic);
//   stop_gradient: no such function (and autodiff is not carried by the protocol).
// setitem is served by `setitem` (capability setitem); in-place operators by `inplace`.
const SUPPORTED = [...Object.keys(OPS), "setitem"];

// -- the errors: TF.js throws plain Error; map by message to the Python kind NumPy raises --------

const KINDS = [
  // out-of-range indices and slices
  [/index value .* is not in|Invalid indices|out of bounds|does not index into/, "IndexError"],
  // an operand of a type or dtype the op does not take
  [/must be (bool|float32|int32|numeric|string) tensor|must be a Tensor or TensorLike|Only supports|dtype of the new value|must have the same dtype|Unknown data type|Cannot construct a complex64/, "TypeError"],
  // a shape with a non-integer size (a negative one is NumPy's ValueError, below)
  [/comprised of positive integers but got shape \[[^\]]*\d\.\d/, "TypeError"],
  // shapes, sizes and axes (NumPy's AxisError is a ValueError too); an array too big to allocate
  [/broadcast|must match|Size\(|shape|rank|axis|Axis|squeeze|dimension|must be|must not|can not|Cannot have a step|should be positive|Invalid typed array length|Array buffer allocation failed/, "ValueError"],
];
function errorKind(e) {
  const message = String(e?.message ?? e);
  if (e instanceof TypeError) return "RuntimeError";  // a crash inside TF.js, not a refusal
  for (const [pattern, kind] of KINDS) if (pattern.test(message)) return kind;
  return "RuntimeError";
}

// -- the adapter ---------------------------------------------------------------------------------

const adapter = {
  name: "tfjs-cpu",
  version: tf.version_core,
  capabilities: ["metadata", "setitem", "sync", "conv"],
  methods: ["shape", "dtype", "inplace", "sync", "conv2d", "max_pool2d", "avg_pool2d"],
  ops: SUPPORTED,
  // What TF.js declares of its dtypes: float32 is its default float (numbers, the mean of ints,
  // int / float) and int32 its default int and index dtype. Ops that refuse a dtype by name
  // ("must be float32 tensor", "must be bool tensor", "Only supports 'int32'") are listed.
  dtype_policy: {
    // No float16: where NumPy computes a bool's float function in float16, TF.js would in float32.
    dtypes: DTYPES, default_float: "float32", default_int: "int32", index: "int32",
    promotion: { bool: "float32", "bool,bool": "float32" },
    unsupported: [
      ...["sqrt", "log", "sin", "cos", "tan", "cosh", "tanh", "floor", "ceil"]
        .flatMap((op) => [`${op}:int32`, `${op}:bool`]),
      ...["logical_not", "logical_and", "logical_or", "logical_xor", "any", "all"]
        .flatMap((op) => [`${op}:float32`, `${op}:int32`]),
      "bitwise_and:bool",
    ],
  },
  errorKind,

  from_numpy([a]) { return new Box(fromNumpy(a)); },
  to_numpy([x]) {
    const t = x.t;
    const data = t.dataSync();
    return new NdArray(t.dtype, [...t.shape], new TYPED[t.dtype](data));  // a copy, as read
  },
  conv2d, max_pool2d, avg_pool2d,
  barrier() { return null; },  // eager: nothing is ever pending
  sync() { return null; },
  shape([x]) { return Tuple.from(x.t.shape); },
  dtype([x]) { return new DType(x.t.dtype); },

  apply([op, ...args], kwargs) {
    const fn = OPS[op];
    if (op === "setitem") return setitem(args[0], key(args[1]), arg(args[2]));
    if (!fn) throw new PyError("NotImplementedError", `TF.js has no ${op}`);
    // A getitem key keeps its structure (a tuple, lists, slices); everything else as TF.js takes it.
    const a = op === "getitem" ? [arg(args[0]), key(args[1])] : args.map(arg);
    return wrap(fn(bind(op, a, Object.fromEntries(Object.entries(kwargs).map(([k, v]) => [k, arg(v)])))));
  },

  inplace([op, x, other]) {
    const fn = OPS[op];
    if (!fn) throw new PyError("NotImplementedError", `TF.js has no ${op}`);
    return rebind(x, fn(bind(op, [x.t, arg(other)], {})));
  },

  // Python's float(x), int(x), bool(x), operator.index(x), len(x), x.item(), by NumPy 2's rules:
  // float, int and index of 0-d arrays only (index: of integers), bool and item of one element.
  convert([x, kind]) {
    const t = x.t;
    if (kind === "len") {
      if (t.rank === 0) throw new PyError("TypeError", "len() of unsized object");
      return t.shape[0];
    }
    if (kind === "index" && (t.rank !== 0 || t.dtype !== "int32")) {
      throw new PyError("TypeError", "only integer scalar arrays can be converted to a scalar index");
    }
    if ((kind === "float" || kind === "int") && t.rank !== 0) {
      throw new PyError("TypeError", "only 0-dimensional arrays can be converted to Python scalars");
    }
    if (t.size !== 1) {
      throw new PyError("ValueError", kind === "bool"
        ? "The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()"
        : "can only convert an array of size 1 to a Python scalar");
    }
    const v = t.dataSync()[0];
    if (kind === "bool" || (kind === "item" && t.dtype === "bool")) return v !== 0;
    if (kind === "float" || (kind === "item" && t.dtype === "float32")) return new PyFloat(v);
    if (Number.isNaN(v)) throw new PyError("ValueError", "cannot convert float NaN to integer");
    if (!Number.isFinite(v)) throw new PyError("OverflowError", "cannot convert float infinity to integer");
    // int of a float truncates, as Python's. protocol.mjs writes an integer of 1e21 or more as
    // JSON "1e+21", which the client refuses as an untagged float: past 2**53 (where every float
    // is an integer) it goes as a float, and the client's int() of it is exact.
    const n = Math.trunc(v);
    return Math.abs(n) < 2 ** 53 ? n : new PyFloat(n);
  },
};

/** A getitem key with its index lists kept as lists (arg() would leave them so too). */
function key(k) {
  if (k instanceof Tuple) return Tuple.from([...k].map((i) => (i instanceof Box ? i : i instanceof PyFloat ? i.value : i)));
  return k instanceof PyFloat ? k.value : k;
}

serve(adapter);
