// The public types of the file functions (lib/io/files.ts), apart so that
// each format's module names them without importing the others.
import type { DType } from '../generated/dtypes';

/** The file formats gx.save and gx.loadTensors know. */
export type FileFormat = 'safetensors' | 'npy' | 'npz';

/** What a file says of one tensor, without its data. */
export interface TensorInfo {
  dtype: DType;
  shape: number[];
}

/** What gx.inspectTensors reads: the format, the tensors' dtypes and shapes, and the safetensors metadata. */
export interface TensorFileInfo {
  format: FileFormat;
  /** The tensors by name, in the order their data lies in the file. */
  tensors: Record<string, TensorInfo>;
  /** safetensors' "__metadata__" (str -> str); {} when the file has none, and for .npy and .npz. */
  metadata: Record<string, string>;
}

/** @internal A tensor of a file, found by its format's reader: its name, dtype and shape. */
export interface NamedInfo extends TensorInfo {
  name: string;
}
