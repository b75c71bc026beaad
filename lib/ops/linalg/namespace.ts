// gx.linalg: linear algebra beyond matmul, named as torch.linalg names it.
export { svd, type SvdResult, type SvdOptions } from './svd';
export { qr, type QrMode, type QrOptions, type QrResult } from './qr';
export { solve, inv, det, slogdet, type SlogdetResult } from './lu';
export { cholesky, eigh, type CholeskyOptions, type EighOptions, type EighResult } from './symmetric';
export { vectorNorm, matrixNorm, norm, type NormOptions, type VectorNormOptions, type MatrixNormOptions, type MatrixNormOrd, type LinalgNormOptions } from './norms';
export { cross } from './products';
export { pinv, lstsq, matrixRank, eigvalsh, type RankToleranceOptions, type LstsqOptions, type LstsqResult, type LstsqFields } from './solvers';
