// gx.linalg: linear algebra beyond matmul, named as torch.linalg names it.
export { svd, type SvdResult, type SvdOptions } from './linalg-svd';
export { qr, type QrMode, type QrOptions, type QrResult } from './linalg-qr';
export { solve, inv, det, slogdet, type SlogdetResult } from './linalg-lu';
export { cholesky, eigh, type CholeskyOptions, type EighOptions, type EighResult } from './linalg-symmetric';
export { vectorNorm, matrixNorm, norm, type NormOptions, type VectorNormOptions, type MatrixNormOptions, type MatrixNormOrd, type LinalgNormOptions } from './linalg-norms';
export { cross } from './linalg-products';
export { pinv, lstsq, matrixRank, eigvalsh, type RankToleranceOptions, type LstsqOptions, type LstsqResult, type LstsqFields } from './linalg-solvers';
