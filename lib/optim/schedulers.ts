// gx.optim.lrScheduler: the schedulers of lr-scheduler.ts and SequentialLR, which chains them.
export * from './lr-scheduler';
export * from './sequential-lr';
export type { SchedulerState } from './scheduler-state';
