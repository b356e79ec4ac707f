// Serializes a fixed set of values and serializer snapshots with Flink's own serializers and
// prints "name hex" per line. tests/flink/test_flink_crosscheck.py compiles and runs it against
// the flink-dist jar of apache-flink-libraries and compares every line with the reference.
// "reread" rewrites records read from stdin; "judge" gives Flink's verdict on evolutions read
// from stdin (tests/flink/test_flink_verdicts.py).

import java.io.BufferedReader;
import java.io.File;
import java.net.URL;
import java.net.URLClassLoader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshotSerializationUtil;
import org.apache.flink.api.common.typeutils.base.BooleanSerializer;
import org.apache.flink.api.common.typeutils.base.ByteSerializer;
import org.apache.flink.api.common.typeutils.base.DoubleSerializer;
import org.apache.flink.api.common.typeutils.base.EnumSerializer;
import org.apache.flink.api.common.typeutils.base.FloatSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.api.common.typeutils.base.ShortSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.java.typeutils.TypeExtractor;
import org.apache.flink.api.java.typeutils.runtime.NullableSerializer;
import org.apache.flink.api.java.typeutils.runtime.RowSerializer;
import org.apache.flink.api.java.typeutils.runtime.TupleSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.types.Row;
import org.apache.flink.types.RowKind;

public class CrossCheck {

    public enum Color { RED, GREEN, BLUE }

    /** A POJO: public no-arg constructor, public fields. */
    public static class Item {
        public String name;
        public int count;
        public Item() {}
        Item(String name, int count) { this.name = name; this.count = count; }
    }

    static String hex(byte[] bytes) {
        StringBuilder sb = new StringBuilder();
        for (byte b : bytes) {
            sb.append(String.format("%02x", b & 0xff));
        }
        return sb.toString();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    static void data(String name, TypeSerializer serializer, Object value) throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(64);
        serializer.serialize(value, out);
        System.out.println(name + " " + hex(out.getCopyOfBuffer()));
    }

    static void snapshot(String name, TypeSerializer<?> serializer) throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(64);
        TypeSerializerSnapshotSerializationUtil.writeSerializerSnapshot(out, serializer.snapshotConfiguration());
        System.out.println(name + " " + hex(out.getCopyOfBuffer()));
    }

    /** The Flink serializer for each kind of record the "reread" mode accepts. */
    static TypeSerializer<?> forKind(String kind) {
        switch (kind) {
            case "boolean": return BooleanSerializer.INSTANCE;
            case "byte": return ByteSerializer.INSTANCE;
            case "short": return ShortSerializer.INSTANCE;
            case "int": return IntSerializer.INSTANCE;
            case "long": return LongSerializer.INSTANCE;
            case "float": return FloatSerializer.INSTANCE;
            case "double": return DoubleSerializer.INSTANCE;
            case "string": return StringSerializer.INSTANCE;
            case "bytes": return BytePrimitiveArraySerializer.INSTANCE;
            case "list_string": return new ListSerializer<>(StringSerializer.INSTANCE);
            case "map_string_long": return new MapSerializer<>(StringSerializer.INSTANCE, LongSerializer.INSTANCE);
            case "padded_long": return NullableSerializer.wrap(LongSerializer.INSTANCE, true);
            case "enum": return new EnumSerializer<>(Color.class);
            case "row4": return new RowSerializer(new TypeSerializer<?>[] {
                    IntSerializer.INSTANCE, LongSerializer.INSTANCE, StringSerializer.INSTANCE, IntSerializer.INSTANCE});
            default: throw new IllegalArgumentException("unknown kind " + kind);
        }
    }

    /**
     * Reads "kind hex" lines from stdin, deserializes each record with Flink's serializer,
     * serializes the value again and prints "kind hex" (or "kind ERROR message").
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static void reread() throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split(" ", -1);
            String kind = parts[0];
            String hexed = parts.length > 1 ? parts[1] : "";
            byte[] data = new byte[hexed.length() / 2];
            for (int i = 0; i < data.length; i++) {
                data[i] = (byte) Integer.parseInt(hexed.substring(2 * i, 2 * i + 2), 16);
            }
            try {
                TypeSerializer serializer = forKind(kind);
                DataInputDeserializer source = new DataInputDeserializer(data);
                Object value = serializer.deserialize(source);
                if (source.available() != 0) {
                    System.out.println(kind + " ERROR " + source.available() + " bytes left over");
                    continue;
                }
                DataOutputSerializer out = new DataOutputSerializer(64);
                serializer.serialize(value, out);
                System.out.println(kind + " " + hex(out.getCopyOfBuffer()));
            } catch (Exception e) {
                System.out.println(kind + " ERROR " + e.toString().replace('\n', ' '));
            }
        }
    }

    static byte[] unhex(String hexed) {
        byte[] data = new byte[hexed.length() / 2];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) Integer.parseInt(hexed.substring(2 * i, 2 * i + 2), 16);
        }
        return data;
    }

    /**
     * Reads "id old-snapshot new-snapshot record" lines (hex; snapshots in the top-level form;
     * user classes from the directory given, if any),
     * and prints "id verdict hex" where verdict is the new snapshot's judgement of the old one
     * and hex the record as Flink brings it over: read and rewritten by the new serializer (as
     * is), by the reconfigured one, or read by the old and written by the new (after
     * migration); "id incompatible -" when incompatible; "ERROR:message" in place of the hex
     * when bringing the record over fails, and "ERROR" as the verdict when judging fails.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static void judge(String classes) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.US_ASCII));
        // The user classes (enums, POJOs) as the restoring job has them: the new versions only.
        ClassLoader loader = classes == null
                ? CrossCheck.class.getClassLoader()
                : new URLClassLoader(new URL[] {new File(classes).toURI().toURL()}, CrossCheck.class.getClassLoader());
        String line;
        while ((line = in.readLine()) != null) {
            String[] parts = line.split(" ", -1);
            String id = parts[0];
            String verdict = "ERROR";
            try {
                TypeSerializerSnapshot old = TypeSerializerSnapshotSerializationUtil.readSerializerSnapshot(
                        new DataInputDeserializer(unhex(parts[1])), loader);
                // As a restoring job does: the new serializer's own snapshot judges the old one.
                TypeSerializer newSerializer = TypeSerializerSnapshotSerializationUtil.readSerializerSnapshot(
                        new DataInputDeserializer(unhex(parts[2])), loader).restoreSerializer();
                TypeSerializerSnapshot neu = newSerializer.snapshotConfiguration();
                TypeSerializerSchemaCompatibility result = neu.resolveSchemaCompatibility(old);
                TypeSerializer reader;
                TypeSerializer writer;
                if (result.isCompatibleAsIs()) {
                    verdict = "compatible_as_is";
                    reader = newSerializer;
                    writer = newSerializer;
                } else if (result.isCompatibleWithReconfiguredSerializer()) {
                    verdict = "compatible_with_reconfigured_serializer";
                    reader = result.getReconfiguredSerializer();
                    writer = reader;
                } else if (result.isCompatibleAfterMigration()) {
                    verdict = "compatible_after_migration";
                    reader = old.restoreSerializer();
                    writer = newSerializer;
                } else {
                    System.out.println(id + " incompatible -");
                    continue;
                }
                DataInputDeserializer source = new DataInputDeserializer(unhex(parts[3]));
                Object value = reader.deserialize(source);
                if (source.available() != 0) {
                    System.out.println(id + " " + verdict + " ERROR:" + source.available() + " bytes left over");
                    continue;
                }
                DataOutputSerializer out = new DataOutputSerializer(64);
                writer.serialize(value, out);
                System.out.println(id + " " + verdict + " " + hex(out.getCopyOfBuffer()));
            } catch (Exception e) {
                StackTraceElement[] at = e.getStackTrace();
                String where = at.length > 0 ? " at " + at[0] : "";
                System.out.println(id + " " + verdict + " ERROR:" + (e.toString() + where).replace('\n', ' '));
            }
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && args[0].equals("reread")) {
            reread();
            return;
        }
        if (args.length > 0 && args[0].equals("judge")) {
            judge(args.length > 1 ? args[1] : null);
            return;
        }
        data("boolean_true", BooleanSerializer.INSTANCE, true);
        data("boolean_false", BooleanSerializer.INSTANCE, false);
        data("byte", ByteSerializer.INSTANCE, (byte) -5);
        data("short", ShortSerializer.INSTANCE, (short) -300);
        data("int_max", IntSerializer.INSTANCE, Integer.MAX_VALUE);
        data("int_neg", IntSerializer.INSTANCE, -1);
        data("long_min", LongSerializer.INSTANCE, Long.MIN_VALUE);
        data("long_42", LongSerializer.INSTANCE, 42L);
        data("float_1_5", FloatSerializer.INSTANCE, 1.5f);
        data("float_neg_zero", FloatSerializer.INSTANCE, -0.0f);
        data("float_nan", FloatSerializer.INSTANCE, Float.NaN);
        data("float_inf", FloatSerializer.INSTANCE, Float.NEGATIVE_INFINITY);
        data("double_neg_zero", DoubleSerializer.INSTANCE, -0.0d);
        data("double_big", DoubleSerializer.INSTANCE, 1e300d);
        data("double_nan", DoubleSerializer.INSTANCE, Double.NaN);
        data("string_example", StringSerializer.INSTANCE, "My string.");
        data("string_empty", StringSerializer.INSTANCE, "");
        data("string_null", StringSerializer.INSTANCE, null);
        data("string_unicode", StringSerializer.INSTANCE, "h\u00e9llo \uD83D\uDE00\u0000 \u4000\uffff\u0080");
        char[] longString = new char[200];
        Arrays.fill(longString, 'a');
        data("string_long", StringSerializer.INSTANCE, new String(longString));
        data("bytes", BytePrimitiveArraySerializer.INSTANCE, new byte[] {0, -1, 5});
        data("bytes_empty", BytePrimitiveArraySerializer.INSTANCE, new byte[0]);

        ListSerializer<Integer> intList = new ListSerializer<>(IntSerializer.INSTANCE);
        data("list_int", intList, new ArrayList<>(Arrays.asList(1, -1, 3)));
        data("list_empty", intList, new ArrayList<Integer>());
        List<String> strings = new ArrayList<>(Arrays.asList("a", null, "bc"));
        data("list_string", new ListSerializer<>(StringSerializer.INSTANCE), strings);

        MapSerializer<String, Long> map = new MapSerializer<>(StringSerializer.INSTANCE, LongSerializer.INSTANCE);
        Map<String, Long> mapValue = new LinkedHashMap<>();
        mapValue.put("a", 1L);
        mapValue.put("b", null);
        data("map_string_long", map, mapValue);

        TypeSerializer<Integer> nullable = NullableSerializer.wrap(IntSerializer.INSTANCE, false);
        TypeSerializer<Integer> padded = NullableSerializer.wrap(IntSerializer.INSTANCE, true);
        data("nullable_null", nullable, null);
        data("nullable_value", nullable, 5);
        data("padded_null", padded, null);
        data("padded_value", padded, 5);

        TupleSerializer<Tuple3<Integer, String, Boolean>> tuple = new TupleSerializer<>(
                (Class<Tuple3<Integer, String, Boolean>>) (Class<?>) Tuple3.class,
                new TypeSerializer<?>[] {IntSerializer.INSTANCE, StringSerializer.INSTANCE, BooleanSerializer.INSTANCE});
        data("tuple3", tuple, Tuple3.of(7, "x", true));

        EnumSerializer<Color> colors = new EnumSerializer<>(Color.class);
        data("enum_green", colors, Color.GREEN);
        data("enum_blue", colors, Color.BLUE);

        RowSerializer row4 = new RowSerializer(new TypeSerializer<?>[] {
                IntSerializer.INSTANCE, LongSerializer.INSTANCE, StringSerializer.INSTANCE, IntSerializer.INSTANCE});
        data("row_example", row4, Row.ofKind(RowKind.INSERT, null, 42L, "My string.", null));
        data("row_update_before", row4, Row.ofKind(RowKind.UPDATE_BEFORE, 1, 2L, "x", 3));
        data("row_update_after", row4, Row.ofKind(RowKind.UPDATE_AFTER, 1, null, null, 3));
        data("row_delete", row4, Row.ofKind(RowKind.DELETE, null, null, null, null));
        TypeSerializer<?>[] nine = new TypeSerializer<?>[9];
        Arrays.fill(nine, IntSerializer.INSTANCE);
        data("row_nine", new RowSerializer(nine), Row.ofKind(RowKind.UPDATE_AFTER, 0, null, 2, null, 4, null, 6, null, 8));

        TypeSerializer<Item> pojo = TypeExtractor.createTypeInfo(Item.class).createSerializer(new SerializerConfigImpl());
        data("pojo_item", pojo, new Item("x", 3));
        data("pojo_null_field", pojo, new Item(null, -1));
        data("pojo_null", pojo, null);

        snapshot("snapshot_int", IntSerializer.INSTANCE);
        snapshot("snapshot_string", StringSerializer.INSTANCE);
        snapshot("snapshot_list_string", new ListSerializer<>(StringSerializer.INSTANCE));
        snapshot("snapshot_map_string_long", map);
        snapshot("snapshot_nullable_int", nullable);
        snapshot("snapshot_padded_int", padded);
        snapshot("snapshot_enum", colors);
        snapshot("snapshot_row", row4);
        snapshot("snapshot_tuple3", tuple);
        snapshot("snapshot_pojo", pojo);
        snapshot("snapshot_bytes", BytePrimitiveArraySerializer.INSTANCE);
        builtinSnapshots();
    }

    /**
     * The snapshot Flink writes for each built-in subject's serializer that Flink has
     * (conformance._builtins.subjects declares these bytes as the subject's flink_snapshot):
     * "builtin_NAME hex".
     */
    @SuppressWarnings("unchecked")
    static void builtinSnapshots() throws Exception {
        snapshot("builtin_boolean", BooleanSerializer.INSTANCE);
        snapshot("builtin_byte", ByteSerializer.INSTANCE);
        snapshot("builtin_short", ShortSerializer.INSTANCE);
        snapshot("builtin_int", IntSerializer.INSTANCE);
        snapshot("builtin_long", LongSerializer.INSTANCE);
        snapshot("builtin_float", FloatSerializer.INSTANCE);
        snapshot("builtin_double", DoubleSerializer.INSTANCE);
        snapshot("builtin_string", StringSerializer.INSTANCE);
        snapshot("builtin_bytes", BytePrimitiveArraySerializer.INSTANCE);
        snapshot("builtin_nullable", NullableSerializer.wrap(LongSerializer.INSTANCE, false));
        snapshot("builtin_nullable_padded", NullableSerializer.wrap(IntSerializer.INSTANCE, true));
        snapshot("builtin_nullable_padded_byte", NullableSerializer.wrap(ByteSerializer.INSTANCE, true));
        snapshot("builtin_list", new ListSerializer<>(StringSerializer.INSTANCE));
        snapshot("builtin_map", new MapSerializer<>(StringSerializer.INSTANCE,
                NullableSerializer.wrap(DoubleSerializer.INSTANCE, false)));
        snapshot("builtin_tuple", new TupleSerializer<>((Class<Tuple2<Integer, String>>) (Class<?>) Tuple2.class,
                new TypeSerializer<?>[] {IntSerializer.INSTANCE, StringSerializer.INSTANCE}));
        snapshot("builtin_row", new RowSerializer(new TypeSerializer<?>[] {
                LongSerializer.INSTANCE, StringSerializer.INSTANCE, new ListSerializer<>(StringSerializer.INSTANCE)}));
        snapshot("builtin_flink_row", new RowSerializer(new TypeSerializer<?>[] {
                StringSerializer.INSTANCE, LongSerializer.INSTANCE, StringSerializer.INSTANCE, StringSerializer.INSTANCE}));
    }
}
