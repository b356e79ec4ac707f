// A DataStream job whose keyed state holds RowData, for tests/flink/test_flink_rowdata.py:
//
//   java RowDataJob CASES OUT_DIR
//       CASES: as RowDataCheck reads them ("TYPE<TAB>VALUE" lines), every line of one row type.
//       Runs one job in a local MiniCluster (hashmap backend, state in _metadata, max parallelism
//       128): key i (a long) gets the row of line i in the value state "row" of the operator with
//       uid "rows", declared with InternalTypeInfo of the row type (RowDataSerializer); once every
//       row is in state, a canonical savepoint is taken into OUT_DIR and its path printed.
//
//   java RowDataJob restore CASES SAVEPOINT
//       The same job restored from SAVEPOINT with the row type of CASES: key i reads its state
//       and compares it with the row of line i (as the bytes a new RowDataSerializer writes for
//       each); prints "READ i OK" or "READ i DIFF got-hex want-hex" per key, or "REFUSED cause"
//       when Flink fails the restore.

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.v2.DiscardingSink;
import org.apache.flink.streaming.api.functions.source.legacy.SourceFunction;
import org.apache.flink.table.data.RowData;
import org.apache.flink.table.runtime.typeutils.InternalTypeInfo;
import org.apache.flink.table.types.logical.RowType;
import org.apache.flink.table.types.logical.utils.LogicalTypeParser;
import org.apache.flink.util.Collector;

public class RowDataJob {

    static final List<RowData> ROWS = new ArrayList<>();
    static final AtomicLong STORED = new AtomicLong();
    static final List<String> READ = java.util.Collections.synchronizedList(new ArrayList<>());
    static RowType type;
    static boolean restoring;

    static String hex(RowData row) throws Exception {
        org.apache.flink.core.memory.DataOutputSerializer out = new org.apache.flink.core.memory.DataOutputSerializer(64);
        new org.apache.flink.table.runtime.typeutils.RowDataSerializer(type).serialize(row, out);
        return RowDataCheck.hex(out.getCopyOfBuffer());
    }

    /** Emits the keys 0..n-1, then idles until cancelled. */
    static final class Keys implements SourceFunction<Long> {
        final long count;
        volatile boolean running = true;

        Keys(long count) {
            this.count = count;
        }

        @Override
        public void run(SourceContext<Long> ctx) throws Exception {
            synchronized (ctx.getCheckpointLock()) {
                for (long i = 0; i < count; i++) {
                    ctx.collect(i);
                }
            }
            while (running) {
                Thread.sleep(20);
            }
        }

        @Override
        public void cancel() {
            running = false;
        }
    }

    /** Puts the row of its key into the value state "row". */
    static final class Store extends KeyedProcessFunction<Long, Long, Long> {
        transient ValueState<RowData> row;

        @Override
        public void open(OpenContext context) {
            row = getRuntimeContext().getState(new ValueStateDescriptor<>("row", InternalTypeInfo.of(type)));
        }

        @Override
        public void processElement(Long key, Context ctx, Collector<Long> out) throws Exception {
            if (restoring) {
                RowData got = row.value();
                String want = hex(ROWS.get(key.intValue()));
                String read = got == null ? "null" : hex(got);
                READ.add("READ " + key + (read.equals(want) ? " OK" : " DIFF " + read + " " + want));
            } else {
                row.update(ROWS.get(key.intValue()));
            }
            STORED.incrementAndGet();
        }
    }

    public static void main(String[] args) {
        int status = 0;
        try {
            run(args);
        } catch (Throwable e) {
            e.printStackTrace();
            status = 1;
        }
        System.out.flush();
        Runtime.getRuntime().halt(status); // the MiniCluster's threads would keep the JVM alive
    }

    static void run(String[] args) throws Exception {
        restoring = args[0].equals("restore");
        if (restoring) {
            args = new String[] {args[1], args[2]};
        }
        List<String> lines = Files.readAllLines(Paths.get(args[0]), StandardCharsets.UTF_8);
        for (String line : lines) {
            int tab = line.indexOf('\t');
            RowType parsed = (RowType) LogicalTypeParser.parse(line.substring(0, tab), RowDataJob.class.getClassLoader());
            if (type == null) {
                type = parsed;
            } else if (!type.equals(parsed)) {
                throw new IllegalArgumentException("every case must have the row type " + type + ", got " + parsed);
            }
            ROWS.add(RowDataCheck.parse(type, line.substring(tab + 1)));
        }
        Configuration conf = new Configuration();
        conf.setString("state.backend.type", "hashmap");
        conf.setString("execution.checkpointing.storage", "jobmanager");
        conf.setString("restart-strategy.type", "none");
        conf.setString("rest.bind-port", "0");
        if (restoring) {
            conf.setString("execution.state-recovery.path", args[1]);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(1, conf);
        env.setMaxParallelism(128);
        env.addSource(new Keys(ROWS.size()), "keys", Types.LONG).uid("keys").name("keys")
                .keyBy(k -> k, Types.LONG)
                .process(new Store(), Types.LONG).uid("rows").name("rows")
                .sinkTo(new DiscardingSink<>()).uid("sink").name("sink");
        JobClient client = env.executeAsync("rowdata-job");
        try {
            long deadline = System.currentTimeMillis() + 300_000;
            while (STORED.get() < ROWS.size()) {
                boolean over;
                try {
                    over = client.getJobStatus().get().isGloballyTerminalState();
                } catch (Exception e) {
                    over = true; // the local MiniCluster shuts down once a failed job has ended
                }
                if (over) {
                    Throwable cause = null;
                    try {
                        client.getJobExecutionResult().get();
                    } catch (Exception e) {
                        cause = e;
                    }
                    while (cause != null && cause.getCause() != null) {
                        cause = cause.getCause();
                    }
                    System.out.println("REFUSED " + String.valueOf(cause).replace('\n', ' '));
                    return;
                }
                if (System.currentTimeMillis() > deadline) {
                    throw new IllegalStateException(STORED.get() + " of " + ROWS.size() + " rows stored in 300 s");
                }
                Thread.sleep(50);
            }
            if (restoring) {
                for (String line : READ) {
                    System.out.println(line);
                }
                return;
            }
            String path = null;
            while (path == null) {
                try {
                    path = client.triggerSavepoint(new File(args[1]).toURI().toString(), SavepointFormatType.CANONICAL)
                            .get(300, TimeUnit.SECONDS);
                } catch (java.util.concurrent.ExecutionException e) {
                    if (System.currentTimeMillis() > deadline) {
                        throw e;
                    }
                    Thread.sleep(500); // tasks still being deployed on a loaded machine
                }
            }
            System.out.println(path);
        } finally {
            try {
                client.cancel().get(300, TimeUnit.SECONDS);
            } catch (Exception e) {
                // the job is over already
            }
        }
    }
}
