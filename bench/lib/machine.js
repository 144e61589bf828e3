// What machine the numbers come from.
import os from 'node:os';

export function describeMachine() {
  const cpus = os.cpus();
  return {
    cpuModel: cpus[0]?.model ?? 'unknown',
    cores: cpus.length,
    memoryBytes: os.totalmem(),
    freeMemoryBytesAtStart: os.freemem(),
    loadAverageAtStart: os.loadavg(),
    node: process.version,
    v8: process.versions.v8,
    platform: `${os.platform()} ${os.release()} ${os.arch()}`,
  };
}
