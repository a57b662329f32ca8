import { errors } from '../errors.js';
import { TaskError } from './types.js';

/** TaskError → the TG_* table: NOT_FOUND (also another user's id), LIMIT (503, retry later), TERMINAL (409). */
export async function restTaskErrors<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (!(error instanceof TaskError)) throw error;
    if (error.code === 'NOT_FOUND') throw new errors.TG_NOT_FOUND(error.message);
    if (error.code === 'LIMIT') throw new errors.TG_OVERLOADED(error.message);
    throw new errors.TG_CONFLICT(error.message);
  }
}
