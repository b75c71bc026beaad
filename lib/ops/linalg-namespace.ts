// gx.linalg: linear algebra beyond matmul, named as torch.linalg names it.
export { svd, type SvdResult } from './linalg';
